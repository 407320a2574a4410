// The chat page's scope picker: limit a question to documents chosen from the library, or to
// one of the user's collections, or both; the chosen documents can be kept as a new
// collection, and the chosen collection renamed or deleted (after a confirmation), through
// js/collections.js. Every outcome, an error included, is said in one live line
// (#scope-save-status). What a question may read is decided by the server
// (truthbase.access.scope_of): this only sends `documents` and `collection`.
import { createCollection, deleteCollection, listCollections, NAME_MAX, renameCollection } from "./collections.js";
import { el, getJson } from "./dom.js";

const root = document.getElementById("scope-picker");
let collectionSelect = null;
let documentList = null;
let summary = null;
let saveName = null;
let saveStatus = null;
let manage = null; // rename and delete of the chosen collection: shown while one is chosen
let newName = null;

// The scope fields of a chat body: none when nothing is chosen (every document).
export function scopeOf() {
  const scope = {};
  const documents = chosenDocuments();
  if (documents.length) scope.documents = documents;
  if (collectionSelect && collectionSelect.value) scope.collection = collectionSelect.value;
  return scope;
}

function chosenDocuments() {
  if (!documentList) return [];
  return [...documentList.querySelectorAll("input[type=checkbox]:checked")].map((box) => box.value);
}

function describe() {
  const documents = chosenDocuments().length;
  const collection = collectionSelect?.value;
  const parts = [];
  if (collection) parts.push(`collection “${collection}”`);
  if (documents) parts.push(documents === 1 ? "1 document" : `${documents} documents`);
  summary.textContent = parts.length ? `Only: ${parts.join(" + ")}` : "All documents";
  root.dataset.scoped = parts.length ? "true" : "false";
}

function fillCollections(collections, keep) {
  const options = [el("option", { value: "", text: "No collection" })];
  for (const c of collections) {
    const n = c.documents.length;
    options.push(el("option", { value: c.name, text: `${c.name} (${n} document${n === 1 ? "" : "s"})` }));
  }
  collectionSelect.replaceChildren(...options);
  collectionSelect.value = collections.some((c) => c.name === keep) ? keep : "";
}

function chosenChanged() {
  const chosen = collectionSelect.value;
  manage.hidden = !chosen;
  newName.value = chosen;
  describe();
}

async function loadCollections(keep = "") {
  fillCollections(await listCollections(), keep);
  chosenChanged();
}

// One live line for every outcome; an error is marked so (and styled), never thrown.
function say(text, { error = false } = {}) {
  saveStatus.textContent = text;
  saveStatus.dataset.kind = error ? "error" : "done";
}

async function saveCollection() {
  const name = saveName.value.trim();
  const problem = await createCollection(name, chosenDocuments());
  if (problem) {
    say(`Not saved: ${problem}`, { error: true });
    return;
  }
  saveName.value = "";
  documentList.querySelectorAll("input[type=checkbox]").forEach((box) => { box.checked = false; });
  await loadCollections(name);
  say(`Saved “${name}”.`); // once the picker shows it chosen
}

async function renameChosen() {
  const name = collectionSelect.value;
  const wanted = newName.value.trim();
  if (name && wanted === name) {
    say(`The collection is named “${name}” already.`);
    return;
  }
  const problem = await renameCollection(name, wanted);
  if (problem) {
    say(`Not renamed: ${problem}`, { error: true });
    newName.focus();
    return;
  }
  await loadCollections(wanted);
  say(`Renamed “${name}” to “${wanted}”.`);
}

async function deleteChosen() {
  const name = collectionSelect.value;
  if (!confirm(`Delete the collection “${name}”? Its documents stay in the library.`)) {
    say("Nothing deleted.");
    return;
  }
  const problem = await deleteCollection(name);
  if (problem) {
    say(`Not deleted: ${problem}`, { error: true });
    return;
  }
  await loadCollections("");
  collectionSelect.focus(); // the buttons it came from are hidden now
  say(`Deleted “${name}”.`);
}

async function build() {
  if (!root) return;
  summary = el("span", { class: "scope-summary", id: "scope-summary", "aria-live": "polite" });
  collectionSelect = el("select", { id: "scope-collection", onchange: chosenChanged });
  documentList = el("ul", { class: "scope-documents", id: "scope-documents", "aria-label": "Documents" });
  saveName = el("input", { id: "scope-save-name", type: "text", maxlength: String(NAME_MAX), placeholder: "Collection name" });
  saveStatus = el("p", { class: "scope-save-status", id: "scope-save-status", role: "status", "aria-live": "polite" });
  newName = el("input", { id: "scope-rename-name", type: "text", maxlength: String(NAME_MAX), autocomplete: "off" });
  manage = el("div", { class: "scope-manage", id: "scope-manage", role: "group", "aria-label": "The chosen collection", hidden: "" }, [
    el("label", { for: "scope-rename-name", text: "New name " }),
    newName,
    el("button", { type: "button", id: "scope-rename", text: "Rename", onclick: renameChosen }),
    el("button", { type: "button", id: "scope-delete", text: "Delete collection", onclick: deleteChosen }),
  ]);
  // Enter in a name field does what its button does, not ask the question (the form's submit).
  const enterDoes = (input, action) => input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      action();
    }
  });
  enterDoes(newName, renameChosen);
  enterDoes(saveName, saveCollection);
  root.replaceChildren(
    el("details", { class: "scope" }, [
      el("summary", {}, ["Limit to: ", summary]),
      el("label", { for: "scope-collection", text: "Collection " }),
      collectionSelect,
      manage,
      el("p", { class: "scope-hint", text: "Documents (with a collection: both)" }),
      documentList,
      el("div", { class: "scope-save" }, [
        el("label", { for: "scope-save-name", text: "Keep the chosen documents as " }),
        saveName,
        el("button", { type: "button", id: "scope-save", text: "Save collection", onclick: saveCollection }),
      ]),
      saveStatus,
    ]),
  );
  describe();
  try {
    const documents = await getJson("/api/documents", "documents");
    documentList.replaceChildren(
      ...documents.map((d) =>
        el("li", {}, [
          el("label", {}, [
            el("input", { type: "checkbox", value: d.id, "data-title": d.display_title, onchange: describe }),
            ` ${d.display_title}`,
          ]),
        ]),
      ),
    );
    await loadCollections();
    root.dataset.ready = "true";
  } catch (error) {
    summary.textContent = `All documents (${error.message})`;
  }
}

build();
