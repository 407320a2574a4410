// The chat page's scope picker: limit a question to documents chosen from the library, or to
// one of the user's collections (GET /api/collections), or both; a choice of documents can be
// kept as a new collection (POST /api/collections). What a question may read is decided by the
// server (truthbase.access.scope_of): this only sends `documents` and `collection`.
import { el, getJson } from "./dom.js";

const root = document.getElementById("scope-picker");
let collectionSelect = null;
let documentList = null;
let summary = null;
let saveName = null;
let saveStatus = null;

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

async function loadCollections(keep = "") {
  const body = await getJson("/api/collections", "collections");
  fillCollections(body.collections, keep);
  describe();
}

async function saveCollection(event) {
  event.preventDefault();
  const name = saveName.value.trim();
  const documents = chosenDocuments();
  if (!name || !documents.length) {
    saveStatus.textContent = "Choose documents and give the collection a name.";
    return;
  }
  const response = await fetch("/api/collections", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name, documents }),
  });
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail ?? detail; } catch { /* not JSON */ }
    saveStatus.textContent = `Not saved: ${typeof detail === "string" ? detail : "invalid name"}`;
    return;
  }
  saveStatus.textContent = `Saved “${name}”.`;
  saveName.value = "";
  documentList.querySelectorAll("input[type=checkbox]").forEach((box) => { box.checked = false; });
  await loadCollections(name);
}

async function build() {
  if (!root) return;
  summary = el("span", { class: "scope-summary", id: "scope-summary", "aria-live": "polite" });
  collectionSelect = el("select", { id: "scope-collection", onchange: describe });
  documentList = el("ul", { class: "scope-documents", id: "scope-documents" });
  saveName = el("input", { id: "scope-save-name", type: "text", maxlength: "100", placeholder: "Collection name" });
  saveStatus = el("span", { class: "scope-save-status", id: "scope-save-status", role: "status" });
  root.replaceChildren(
    el("details", { class: "scope" }, [
      el("summary", {}, ["Limit to: ", summary]),
      el("label", { for: "scope-collection", text: "Collection " }),
      collectionSelect,
      el("p", { class: "scope-hint", text: "Documents (with a collection: both)" }),
      documentList,
      el("div", { class: "scope-save" }, [
        el("label", { for: "scope-save-name", text: "Keep the chosen documents as " }),
        saveName,
        el("button", { type: "button", id: "scope-save", text: "Save collection", onclick: saveCollection }),
        saveStatus,
      ]),
    ]),
  );
  describe();
  try {
    const documents = await getJson("/api/documents", "documents");
    documentList.replaceChildren(
      ...documents.map((d) =>
        el("li", {}, [
          el("label", {}, [
            el("input", { type: "checkbox", value: d.id, "data-title": d.title, onchange: describe }),
            ` ${d.title}`,
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
