// The chat page: POST /api/chat streams server-sent events (sources, token..., citations,
// done | error); [n] markers become footnote buttons: the first click (Enter, Space) shows a
// preview of the cited text, the second closes it (so does Escape), and its "Open" button shows
// the cited span highlighted: in the pdf.js viewer for a PDF, in the reader for an EPUB.
import { conflictNote, conflictSpan } from "./conflict.js";
import { el } from "./dom.js";
import { Reader } from "./reader.js";
import { scopeOf } from "./scope.js";
import { initThreads, noteDone, threadBody } from "./threads.js";

const form = document.getElementById("ask");
const input = document.getElementById("question");
const askButton = document.getElementById("ask-button");
const statusLine = document.getElementById("status");
const answerBox = document.getElementById("answer");
const sourcesList = document.getElementById("sources");
const modeSelect = document.getElementById("mode");

let opener = null; // the element that opened the viewer or reader, to return focus on close
function onPanelClose() {
  document.querySelectorAll(".source-open[aria-expanded=true]").forEach((b) => b.setAttribute("aria-expanded", "false"));
  if (opener && document.contains(opener)) opener.focus();
}
// The PDF viewer's code (pdf.js, some 600 KiB) loads only when an answer arrives (to prefetch
// the cited pages while it streams) or a citation is opened, never before the page's first paint.
const viewerRoot = document.getElementById("viewer");
let viewerCode = null;
let viewerReady = null;
function loadViewerCode() {
  viewerCode ??= import("./viewer.js");
  return viewerCode;
}
function getViewer() {
  viewerReady ??= loadViewerCode().then(({ Viewer }) => {
    const viewer = new Viewer(viewerRoot, { onClose: onPanelClose });
    window.truthbaseViewer = viewer;
    return viewer;
  });
  return viewerReady;
}
const reader = new Reader(document.getElementById("reader"), { onClose: onPanelClose });
window.truthbaseReader = reader;

// Warm the viewer for the pages an answer may cite: its code, the PDF, the page, the spans.
const prefetched = new Set();
function prefetchTargets(targets) {
  const fresh = targets.filter((t) => kinds.get(t.doc) === "pdf" && !prefetched.has(JSON.stringify(t)));
  if (!fresh.length) return;
  fresh.forEach((t) => prefetched.add(JSON.stringify(t)));
  loadViewerCode()
    .then(({ prefetch }) => fresh.forEach((t) => prefetch(t)))
    .catch(() => {}); // opening the citation reports any failure
}

// Document id -> kind ("pdf" | "epub"): a citation opens the viewer or the reader by it.
const kinds = new Map();
// Documents the prompt-injection screen flagged: their sources say "contains instructions".
const flagged = new Set();
function loadDocuments() {
  return fetch("/api/documents")
    .then((r) => r.json())
    .then((docs) => {
      for (const d of docs) {
        kinds.set(d.id, d.kind);
        if (d.contains_instructions) flagged.add(d.id);
      }
      return docs;
    });
}
let documentsLoaded = loadDocuments();
async function kindOf(doc) {
  if (!kinds.has(doc)) {
    documentsLoaded = loadDocuments();
    await documentsLoaded.catch(() => {});
  }
  return kinds.get(doc) ?? "pdf";
}
const where = (doc, unit) => (kinds.get(doc) === "epub" ? `section ${unit + 1}` : `page ${unit + 1}`);

let state = null;
const MARKERS = /\[(\d+(?:\s*,\s*\d+)*)\]/g;
const squashSpaces = (text) => text.replace(/\s+/g, " ").trim();

function snippet(text, width = 260) {
  const flat = squashSpaces(text);
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`;
}

function targetOf(source, citation) {
  const strong = citation ? { start: citation.start, end: citation.end } : null;
  const sameUnit = source && (!citation || (citation.doc_id === source.doc_id && citation.unit === source.unit));
  const light = sameUnit && source ? { start: source.start, end: source.end } : null;
  const doc = citation?.doc_id ?? source.doc_id;
  const unit = citation?.unit ?? source.unit;
  return { doc, unit, page: unit + 1, strong, light, conflict: conflictSpan(citation), title: source?.title };
}

// The standalone page of a target, for "open in a new tab".
function targetUrl(target) {
  const params = new URLSearchParams({ doc: target.doc });
  if (kinds.get(target.doc) === "epub") params.set("unit", String(target.unit));
  else params.set("page", String(target.page));
  if (target.strong) {
    params.set("start", String(target.strong.start));
    params.set("end", String(target.strong.end));
  }
  if (target.light) {
    params.set("cstart", String(target.light.start));
    params.set("cend", String(target.light.end));
  }
  if (target.conflict) {
    params.set("conflict_start", String(target.conflict.start));
    params.set("conflict_end", String(target.conflict.end));
  }
  return `${kinds.get(target.doc) === "epub" ? "/read" : "/view"}?${params}`;
}

async function openTarget(button, source, citation) {
  opener = button;
  document.querySelectorAll(".source-open[aria-expanded=true]").forEach((b) => b.setAttribute("aria-expanded", "false"));
  if (button.classList.contains("source-open")) button.setAttribute("aria-expanded", "true");
  const target = targetOf(source, citation);
  if ((await kindOf(target.doc)) === "epub") {
    viewerRoot.hidden = true;
    await reader.open(target);
    reader.title.focus();
  } else {
    reader.root.hidden = true;
    const viewer = await getViewer();
    await viewer.open(target);
    viewer.title.focus();
  }
}

// Footnote previews: one open at a time, right after its marker.
function closePreview(button, { focus = false } = {}) {
  const preview = document.getElementById(button.getAttribute("aria-controls"));
  preview?.remove();
  button.setAttribute("aria-expanded", "false");
  if (focus) button.focus();
}

// A citation's state: "supported" (the quote is on the page and the claim follows from it: the
// only state with the verified look), "quote_only" (the quote is on the page; the claim is not
// shown to follow: check this passage), "unverified". An answer stored before states has only
// `verified`, which then reads as before.
// A citation of a reopened thread that is no longer current (:mod:`truthbase.app.threads`:
// "changed", "deleted", "hidden") takes that state, with its reason, and opens no highlight.
const STALE = new Set(["changed", "deleted", "hidden"]);
function stateOf(citation) {
  if (!citation) return null;
  if (STALE.has(citation.recheck?.state)) return citation.recheck.state;
  return citation.state ?? (citation.verified ? "supported" : "unverified");
}
const STATE_STATUS = {
  supported: "Verified quote",
  quote_only: "Check this passage: the quote is on the page, but the claim is not shown to follow from it",
  unverified: "Not verified",
  changed: "Changed since: the document's text is not the same here now",
  deleted: "The document was deleted",
  hidden: "The document is no longer visible to you",
};
const STATE_LABEL = {
  supported: ", verified", quote_only: ", check this passage", unverified: ", not verified",
  changed: ", changed since", deleted: ", document deleted", hidden: ", no longer visible",
};
const STATE_CLASS = {
  supported: "", quote_only: " cite-quote-only", unverified: " cite-unverified",
  changed: " cite-stale", deleted: " cite-stale", hidden: " cite-stale",
};

function togglePreview(button, source, citation) {
  if (button.getAttribute("aria-expanded") === "true") {
    closePreview(button);
    return;
  }
  answerBox.querySelectorAll(".cite[aria-expanded=true]").forEach((b) => closePreview(b));
  const target = targetOf(source, citation);
  const kind = stateOf(citation);
  const stale = STALE.has(kind);
  const reason = stale && citation.recheck.reason ? ` (${citation.recheck.reason})` : "";
  const status = citation ? `${STATE_STATUS[kind]}${reason}` : "Source passage (no citation resolved)";
  const openButton = el("button", {
    type: "button",
    class: "preview-open",
    text: kinds.get(target.doc) === "epub" ? "Open the section" : "Open the page",
    "aria-label": `Open ${source.title}, ${where(target.doc, target.unit)}, with the cited text highlighted`,
    onclick: () => openTarget(button, source, citation),
  });
  const preview = el("span", {
    class: `cite-preview${kind === "unverified" || stale ? " cite-preview-unverified" : kind === "quote_only" ? " cite-preview-quote-only" : ""}`,
    id: button.getAttribute("aria-controls"),
    role: "group",
    "aria-label": `Citation ${button.dataset.n}`,
  }, [
    el("span", { class: "preview-where", text: `[${button.dataset.n}] ${source.title}, ${where(target.doc, target.unit)}` }),
    el("q", { class: "preview-quote", text: squashSpaces(citation ? citation.quote : snippet(source.text, 400)) }),
    ...[conflictNote(citation)].filter(Boolean),
    el("span", { class: "preview-tools" }, [
      el("span", { class: "preview-status", text: status }),
      ...(stale ? [] : [
        openButton,
        el("a", { class: "preview-link", href: targetUrl(target), target: "_blank", rel: "noopener", text: "new tab" }),
      ]),
    ]),
  ]);
  preview.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      closePreview(button, { focus: true });
    }
  });
  button.after(preview);
  button.setAttribute("aria-expanded", "true");
}

function citationFor(n, claim) {
  if (!state?.citations) return null;
  const same = state.citations.filter((c) => c.n === n);
  const wanted = squashSpaces(claim);
  return (
    same.find((c) => stateOf(c) === "supported" && squashSpaces(c.claim) === wanted) ??
    same.find((c) => c.verified && squashSpaces(c.claim) === wanted) ??
    same.find((c) => squashSpaces(c.claim) === wanted) ??
    same.find((c) => stateOf(c) === "supported") ??
    same.find((c) => c.verified) ??
    same[0] ??
    null
  );
}

let markerCount = 0;
function markerButton(n, claim) {
  const source = state.sources.find((s) => s.n === n);
  const citation = citationFor(n, claim);
  const place = source
    ? `${source.title}, ${where(citation?.doc_id ?? source.doc_id, citation?.unit ?? source.unit)}`
    : "unknown source";
  const kind = stateOf(citation);
  const label = citation ? STATE_LABEL[kind] : "";
  const button = el("button", {
    type: "button",
    class: `cite${citation ? STATE_CLASS[kind] : ""}`,
    "data-n": String(n),
    "data-state": kind ?? "",
    "aria-label": `Citation ${n}: ${place}${label}. Shows the cited text.`,
    "aria-controls": `cite-preview-${++markerCount}`,
    "aria-expanded": "false",
    text: `[${n}]`,
  });
  if (citation) {
    button.dataset.doc = citation.doc_id;
    button.dataset.page = String(citation.page);
    button.dataset.unit = String(citation.unit);
    button.dataset.start = String(citation.start);
    button.dataset.end = String(citation.end);
  }
  if (!source) button.disabled = true;
  else {
    button.dataset.kind = kinds.get(citation?.doc_id ?? source.doc_id) ?? "";
    button.addEventListener("click", () => togglePreview(button, source, citation));
    button.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
        event.preventDefault();
        event.stopPropagation();
        closePreview(button, { focus: true });
      }
    });
  }
  return button;
}

function renderAnswer(text) {
  const fragment = document.createDocumentFragment();
  let last = 0;
  let claimStart = 0;
  for (const match of text.matchAll(MARKERS)) {
    fragment.append(text.slice(last, match.index));
    const claim = text.slice(claimStart, match.index);
    match[1].split(",").forEach((part, i) => {
      if (i) fragment.append(" ");
      fragment.append(markerButton(Number(part.trim()), claim));
    });
    last = claimStart = match.index + match[0].length;
  }
  fragment.append(text.slice(last));
  const paragraph = el("p", { class: "answer-text" });
  paragraph.append(fragment);
  answerBox.replaceChildren(paragraph);
}

// Agent mode's tools may show hundreds of passages: past this many, the list shows the cited
// ones (or, before the citations arrive, the first ones) and says how many it left out.
const MAX_LISTED = 12;

function listedSources() {
  if (state.sources.length <= MAX_LISTED) return state.sources;
  if (state.citations) {
    const cited = new Set(state.citations.map((c) => c.n));
    return state.sources.filter((s) => cited.has(s.n));
  }
  return state.sources.slice(0, MAX_LISTED);
}

function renderSources() {
  const listed = listedSources();
  const hidden = state.sources.length - listed.length;
  const more = hidden > 0
    ? [el("li", { class: "source source-more", text: `${hidden} more passages were consulted and are not cited.` })]
    : [];
  sourcesList.replaceChildren(
    ...listed.map((source) => {
      const citation = state.citations?.find((c) => c.n === source.n && c.verified && !STALE.has(stateOf(c))) ?? null;
      const button = el("button", {
        type: "button",
        class: "source-open",
        "data-n": String(source.n),
        "aria-label": `Open source ${source.n}: ${source.title}, ${where(source.doc_id, source.unit)}`,
        "aria-controls": "viewer",
        "aria-expanded": "false",
        onclick: () => openTarget(button, source, citation),
      }, [
        el("span", { class: "source-n", text: `[${source.n}]` }),
        el("span", { class: "source-title", text: source.title }),
        el("span", { class: "source-page", text: where(source.doc_id, source.unit) }),
        ...(source.recheck
          ? [el("span", { class: "source-stale", text: STATE_STATUS[source.recheck.state] })]
          : []),
        ...(flagged.has(source.doc_id)
          ? [el("span", { class: "flag-instructions", title: "The document contains text addressed to an AI model; it is treated as data, never followed.", text: "contains instructions" })]
          : []),
      ]);
      if (source.recheck) button.disabled = true; // its page's text is not the one cited
      const section = source.section ? [el("p", { class: "source-section", text: source.section })] : [];
      return el("li", { class: "source" }, [button, ...section, el("p", { class: "snippet", text: snippet(source.text) })]);
    }),
    ...more,
  );
}

function setStatus(text) {
  statusLine.textContent = text;
}

function handle(event, data) {
  if (event === "sources") {
    state.sources = data.sources;
    renderSources();
    // The best sources' pages, while the answer is written (the citations name the spans).
    prefetchTargets(state.sources.slice(0, 3).map((source) => targetOf(source, null)));
    setStatus(`Found ${data.sources.length} passages; answering…`);
  } else if (event === "token") {
    state.text += data.text;
    renderAnswer(state.text);
  } else if (event === "citations") {
    state.citations = data.citations;
    renderAnswer(state.text);
    renderSources();
    prefetchTargets(
      state.citations
        .map((c) => [state.sources.find((s) => s.n === c.n), c])
        .filter(([source]) => source)
        .map(([source, c]) => targetOf(source, c)),
    );
  } else if (event === "done") {
    noteDone(data);
    const answer = data.answer;
    // js/feedback.js draws the thumbs and the citations' report buttons under it.
    // `origin`: absent for a fresh answer, "own" or "shared" for a stored one (js/threads.js).
    document.dispatchEvent(new CustomEvent("truthbase:answer", { detail: { answer, box: answerBox, origin: data.origin } }));
    state.citations = answer.citations;
    state.sources = answer.sources;
    renderSources();
    if (answer.refused && answer.outcome === "weak") {
      // Weak: no claim is made and nothing is verified, but the closest passages are listed.
      // A question that asked for a price, a version or a date no close passage gives says so.
      const slot = { price: "a price", version: "a version", date: "a date" }[(answer.info || {}).unfilled_slot];
      const why = slot ? ` None of the closest passages gives ${slot}.` : "";
      answerBox.replaceChildren(
        el("p", { class: "refusal weak", text: `The documents may not answer this.${why} The closest passages are listed below; none of them is shown as an answer.` }),
      );
      answerBox.dataset.state = "refused";
      answerBox.dataset.outcome = "weak";
      setStatus("The documents may not answer this: the closest passages are listed.");
    } else if (answer.refused) {
      answerBox.replaceChildren(
        el("p", { class: "refusal", text: "Not in these documents: none of the indexed passages supports an answer to this question." }),
      );
      answerBox.dataset.state = "refused";
      setStatus("Not in these documents.");
    } else {
      state.text = answer.text;
      renderAnswer(answer.text);
      answerBox.dataset.state = "done";
      const verified = answer.citations.filter((c) => stateOf(c) === "supported").length;
      const check = answer.citations.filter((c) => stateOf(c) === "quote_only").length;
      const count = answer.citations.length;
      const toCheck = check ? `, ${check} to check` : "";
      setStatus(`Answered with ${count} citation${count === 1 ? "" : "s"} (${verified} verified${toCheck}).`);
    }
  } else if (event === "error") {
    answerBox.dataset.state = "error";
    answerBox.append(el("p", { class: "error", role: "alert", text: `Error (${data.stage}): ${data.message}` }));
    setStatus("The answer failed.");
  }
}

async function ask(question) {
  state = { text: "", sources: [], citations: null };
  answerBox.dataset.state = "streaming";
  delete answerBox.dataset.outcome;
  answerBox.replaceChildren();
  sourcesList.replaceChildren();
  askButton.disabled = true;
  setStatus("Searching…");
  try {
    // "auto" is the server's default: the field is sent only to ask for another mode.
    const body = modeSelect.value === "auto" ? { question } : { question, mode: modeSelect.value };
    Object.assign(body, scopeOf()); // the documents or collection the picker limits it to
    Object.assign(body, threadBody()); // the opened thread: the server sends its turns along
    const response = await fetch("/api/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    if (!response.ok || !response.body) throw new Error(await refusal(response));
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
        }
        if (data.length) handle(event, JSON.parse(data.join("\n")));
      }
    }
    if (!["done", "refused", "error"].includes(answerBox.dataset.state)) {
      handle("error", { stage: "stream", message: "the answer stream ended early" });
    }
  } catch (error) {
    handle("error", { stage: "network", message: error.message ?? String(error) });
  } finally {
    askButton.disabled = false;
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const question = input.value.trim();
  if (question) ask(question);
});

// A stored answer of a saved thread, shown as it was (its citations checked again).
initThreads({
  show: (answer, searchedFor, origin) => {
    state = { text: "", sources: [], citations: null };
    delete answerBox.dataset.outcome;
    answerBox.replaceChildren();
    return documentsLoaded.catch(() => {}).then(() => handle("done", { answer, searched_for: searchedFor, origin }));
  },
});

documentsLoaded
  .then((docs) => {
    document.getElementById("docs-count").textContent =
      docs.length ? `${docs.length} documents indexed: ${docs.map((d) => d.display_title).join("; ")}` : "No documents indexed yet.";
  })
  .catch(() => {});

// A refused chat (403 agent mode, 413, 429 quota, 503 busy) says why in its JSON `detail`.
async function refusal(response) {
  let detail = "";
  try {
    const body = await response.json();
    if (typeof body.detail === "string") detail = body.detail;
  } catch {
    // not JSON: the status alone
  }
  return detail ? `HTTP ${response.status}: ${detail}` : `HTTP ${response.status}`;
}

const initialMode = new URLSearchParams(location.search).get("mode");
if (initialMode && [...modeSelect.options].some((o) => o.value === initialMode)) modeSelect.value = initialMode;
// /?q= only fills the question in: asking takes a click (or Enter), so a page that links or
// frames this one cannot spend the visitor's quota (or start agent mode) on page load.
const initial = new URLSearchParams(location.search).get("q");
if (initial) {
  input.value = initial;
  input.focus();
}
