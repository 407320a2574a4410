// The Library page: uploads (drag and drop, file picker) to POST /api/documents, the ingest jobs
// live from GET /api/jobs/events (server-sent events), the documents from GET /api/library with
// rename, visibility, re-ingest and delete.
import { el, getJson } from "./dom.js";

const drop = document.getElementById("drop");
const picker = document.getElementById("files");
const visibility = document.getElementById("visibility");
const statusLine = document.getElementById("upload-status");
const jobsList = document.getElementById("jobs");
const docsBody = document.getElementById("docs");
const docsEmpty = document.getElementById("docs-empty");

function setStatus(text, error = false) {
  statusLine.textContent = text;
  statusLine.classList.toggle("error", error);
}

async function upload(files) {
  if (!files.length) return;
  const body = new FormData();
  for (const file of files) body.append("file", file, file.name);
  if (visibility.value) body.append("visibility", visibility.value);
  setStatus(`Uploading ${files.length} file${files.length > 1 ? "s" : ""}…`);
  const response = await fetch("/api/documents", { method: "POST", body });
  let data = {};
  try { data = await response.json(); } catch { /* not JSON */ }
  if (!response.ok) {
    setStatus(`Upload refused (${response.status}): ${data.detail ?? response.statusText}`, true);
    return;
  }
  setStatus(`Queued ${data.jobs.length} job${data.jobs.length > 1 ? "s" : ""}.`);
}

picker.addEventListener("change", () => {
  upload([...picker.files]).finally(() => { picker.value = ""; });
});
for (const name of ["dragenter", "dragover"]) {
  drop.addEventListener(name, (event) => { event.preventDefault(); drop.classList.add("over"); });
}
for (const name of ["dragleave", "drop"]) {
  drop.addEventListener(name, () => drop.classList.remove("over"));
}
drop.addEventListener("drop", (event) => {
  event.preventDefault();
  upload([...event.dataTransfer.files]);
});

function jobText(job) {
  if (job.state === "running") {
    const pages = job.pages_total ? ` · page ${job.pages_done} of ${job.pages_total}` : "";
    return `running: ${job.stage ?? "starting"}${pages}`;
  }
  if (job.state === "failed") return `failed: ${job.reason} — ${job.message ?? ""}`;
  if (job.state === "done") return "done";
  return "queued";
}

let lastDone = "";
function renderJobs(jobs) {
  jobsList.replaceChildren(...jobs.slice(0, 30).map((job) => {
    const bar = job.state === "running" && job.pages_total
      ? [el("progress", { max: String(job.pages_total), value: String(job.pages_done), "aria-label": `${job.filename} progress` })]
      : [];
    return el("li", { class: `job job-${job.state}`, "data-job": String(job.id), "data-state": job.state }, [
      el("span", { class: "job-name", text: job.filename }),
      el("span", { class: "job-state", text: jobText(job) }),
      ...bar,
    ]);
  }));
  const done = jobs.filter((j) => j.state === "done" || j.state === "failed").map((j) => j.id).join(",");
  if (done !== lastDone) {
    lastDone = done;
    loadDocuments();
  }
}

function listenJobs() {
  const source = new EventSource("/api/jobs/events");
  source.addEventListener("jobs", (event) => renderJobs(JSON.parse(event.data).jobs));
  source.onerror = () => { /* EventSource reconnects by itself */ };
}

async function change(doc, patch) {
  const response = await fetch(`/api/documents/${doc.id}`, {
    method: "PATCH",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(patch),
  });
  if (!response.ok) setStatus(`Change refused: ${(await response.json()).detail}`, true);
  loadDocuments();
}

async function act(doc, method, path, done) {
  const response = await fetch(path, { method });
  if (!response.ok) {
    setStatus(`${done} failed: ${(await response.json()).detail}`, true);
  } else {
    setStatus(`${done}: ${doc.display_title}`);
  }
  loadDocuments();
}

function docRow(doc) {
  const title = el("td", { class: "doc-title" }, [
    el("a", { href: `/view?doc=${doc.id}&page=1`, text: doc.display_title }),
    ...(doc.contains_instructions
      ? [el("span", { class: "flag-instructions", title: doc.instruction_hits.map((h) => `${h.rule}: ${h.excerpt}`).join("\n"), text: "contains instructions" })]
      : []),
  ]);
  const actions = doc.can_manage
    ? [
      el("button", { type: "button", class: "doc-rename", onclick: () => {
        const name = prompt("New title", doc.title);
        if (name && name.trim() && name.trim() !== doc.title) change(doc, { title: name.trim() });
      }, text: "Rename" }),
      // A private document needs an owner: the operator's (no owner) stay shared.
      ...(doc.owner === null && doc.visibility === "shared" ? [] : [
        el("button", { type: "button", class: "doc-visibility", onclick: () => change(doc, { visibility: doc.visibility === "shared" ? "private" : "shared" }),
          text: doc.visibility === "shared" ? "Make private" : "Share" }),
      ]),
      el("button", { type: "button", class: "doc-reingest", onclick: () => act(doc, "POST", `/api/documents/${doc.id}/reingest`, "Re-ingest queued"), text: "Re-ingest" }),
      el("button", { type: "button", class: "doc-delete", onclick: () => {
        if (confirm(`Delete ${doc.display_title}? Its passages leave search at once.`)) act(doc, "DELETE", `/api/documents/${doc.id}`, "Deleted");
      }, text: "Delete" }),
    ]
    : doc.held
      ? [el("button", { type: "button", class: "doc-delete", onclick: () => {
        if (confirm(`Remove ${doc.display_title} from your library?`)) act(doc, "DELETE", `/api/documents/${doc.id}`, "Removed");
      }, text: "Delete" })]
      : [];
  return el("tr", { "data-doc": doc.id }, [
    title,
    el("td", { text: doc.kind }),
    el("td", { text: String(doc.pages) }),
    el("td", { text: doc.language ?? "—" }),
    el("td", { text: doc.text_source ?? "—" }),
    el("td", { text: doc.owner ?? "operator" }),
    el("td", { text: doc.visibility }),
    el("td", { text: doc.ingested_at.replace("T", " ").replace("+00:00", " UTC") }),
    el("td", { text: doc.status }),
    el("td", { class: "doc-actions" }, actions),
  ]);
}

async function loadDocuments() {
  try {
    const docs = await getJson("/api/library", "the library");
    docsBody.replaceChildren(...docs.map(docRow));
    docsEmpty.hidden = docs.length > 0;
  } catch (error) {
    setStatus(error.message, true);
  }
}

loadDocuments();
listenJobs();
