// The chat page: POST /api/chat streams server-sent events (sources, token..., citations,
// done | error); [n] markers become buttons that open the viewer on the cited span.
import { Viewer } from "./viewer.js";

const form = document.getElementById("ask");
const input = document.getElementById("question");
const askButton = document.getElementById("ask-button");
const statusLine = document.getElementById("status");
const answerBox = document.getElementById("answer");
const sourcesList = document.getElementById("sources");

let opener = null; // the element that opened the viewer, to return focus on close
const viewer = new Viewer(document.getElementById("viewer"), {
  onClose: () => {
    document.querySelectorAll("[aria-expanded=true]").forEach((b) => b.setAttribute("aria-expanded", "false"));
    if (opener && document.contains(opener)) opener.focus();
  },
});
window.truthbaseViewer = viewer;

let state = null;
const MARKERS = /\[(\d+(?:\s*,\s*\d+)*)\]/g;
const squashSpaces = (text) => text.replace(/\s+/g, " ").trim();

function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

function snippet(text, width = 260) {
  const flat = squashSpaces(text);
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`;
}

async function openTarget(button, source, citation) {
  opener = button;
  document.querySelectorAll("[aria-expanded=true]").forEach((b) => b.setAttribute("aria-expanded", "false"));
  button.setAttribute("aria-expanded", "true");
  const strong = citation ? { start: citation.start, end: citation.end } : null;
  const sameUnit = source && (!citation || (citation.doc_id === source.doc_id && citation.unit === source.unit));
  const light = sameUnit && source ? { start: source.start, end: source.end } : null;
  const doc = citation?.doc_id ?? source.doc_id;
  const page = citation?.page ?? source.page;
  await viewer.open({ doc, page, strong, light, title: source?.title });
  viewer.title.focus();
}

function citationFor(n, claim) {
  if (!state?.citations) return null;
  const same = state.citations.filter((c) => c.n === n);
  const wanted = squashSpaces(claim);
  return (
    same.find((c) => c.verified && squashSpaces(c.claim) === wanted) ??
    same.find((c) => squashSpaces(c.claim) === wanted) ??
    same.find((c) => c.verified) ??
    same[0] ??
    null
  );
}

function markerButton(n, claim) {
  const source = state.sources.find((s) => s.n === n);
  const citation = citationFor(n, claim);
  const where = source ? `${source.title}, page ${citation?.page ?? source.page}` : "unknown source";
  const verified = citation ? (citation.verified ? ", verified" : ", not verified") : "";
  const button = el("button", {
    type: "button",
    class: `cite${citation && !citation.verified ? " cite-unverified" : ""}`,
    "data-n": String(n),
    "aria-label": `Citation ${n}: ${where}${verified}. Opens the document viewer.`,
    "aria-controls": "viewer",
    "aria-expanded": "false",
    text: `[${n}]`,
  });
  if (citation) {
    button.dataset.doc = citation.doc_id;
    button.dataset.page = String(citation.page);
    button.dataset.start = String(citation.start);
    button.dataset.end = String(citation.end);
  }
  if (!source) button.disabled = true;
  else button.addEventListener("click", () => openTarget(button, source, citation));
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

function renderSources() {
  sourcesList.replaceChildren(
    ...state.sources.map((source) => {
      const citation = state.citations?.find((c) => c.n === source.n && c.verified) ?? null;
      const button = el("button", {
        type: "button",
        class: "source-open",
        "data-n": String(source.n),
        "aria-label": `Open source ${source.n}: ${source.title}, page ${source.page}`,
        "aria-controls": "viewer",
        "aria-expanded": "false",
        onclick: () => openTarget(button, source, citation),
      }, [
        el("span", { class: "source-n", text: `[${source.n}]` }),
        el("span", { class: "source-title", text: source.title }),
        el("span", { class: "source-page", text: `page ${source.page}` }),
      ]);
      return el("li", { class: "source" }, [button, el("p", { class: "snippet", text: snippet(source.text) })]);
    }),
  );
}

function setStatus(text) {
  statusLine.textContent = text;
}

function handle(event, data) {
  if (event === "sources") {
    state.sources = data.sources;
    renderSources();
    setStatus(`Found ${data.sources.length} passages; answering…`);
  } else if (event === "token") {
    state.text += data.text;
    renderAnswer(state.text);
  } else if (event === "citations") {
    state.citations = data.citations;
    renderAnswer(state.text);
    renderSources();
  } else if (event === "done") {
    const answer = data.answer;
    state.citations = answer.citations;
    state.sources = answer.sources;
    renderSources();
    if (answer.refused) {
      answerBox.replaceChildren(
        el("p", { class: "refusal", text: "Not in these documents: none of the indexed passages supports an answer to this question." }),
      );
      answerBox.dataset.state = "refused";
      setStatus("Not in these documents.");
    } else {
      state.text = answer.text;
      renderAnswer(answer.text);
      answerBox.dataset.state = "done";
      const verified = answer.citations.filter((c) => c.verified).length;
      setStatus(`Answered with ${answer.citations.length} citations (${verified} verified).`);
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
  answerBox.replaceChildren();
  sourcesList.replaceChildren();
  askButton.disabled = true;
  setStatus("Searching…");
  try {
    const response = await fetch("/api/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ question }),
    });
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
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

fetch("/api/documents")
  .then((r) => r.json())
  .then((docs) => {
    document.getElementById("docs-count").textContent =
      docs.length ? `${docs.length} documents indexed: ${docs.map((d) => d.title).join("; ")}` : "No documents indexed yet.";
  })
  .catch(() => {});

const initial = new URLSearchParams(location.search).get("q");
if (initial) {
  input.value = initial;
  ask(initial);
}
