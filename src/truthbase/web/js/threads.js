// Saved threads on the chat page: the list (newest first, searchable by words of questions and
// answers), open, rename, delete, "New thread"; the opened thread's turns; the "searched for"
// line of a follow-up. The server keeps the turns (POST /api/chat with `thread`): the page sends
// the thread's id, never the turns themselves. The URL keeps the opened thread, its shown turn
// and the opened citation (?thread=ID&turn=N&cite=N), so a reload shows the same highlight.
// chat.js renders answers; this module calls it through the `show` it is given.
import { change, el, getJson } from "./dom.js";

const panel = document.getElementById("threads");
const answerBox = document.getElementById("answer");
const sourcesList = document.getElementById("sources");

let current = null; // the opened thread's id (null: the next question starts a new thread)
let shownTurn = null;
let openedCite = null; // the citation or source last opened (its [n]): a reload opens it again
let showAnswer = () => {};

const searchedFor = el("p", { id: "searched-for", class: "searched-for", hidden: "" });
answerBox.before(searchedFor);

const search = el("input", {
  id: "thread-search",
  type: "search",
  autocomplete: "off",
  maxlength: "1000",
  placeholder: "Words of questions or answers",
  "aria-controls": "thread-list",
});
// Newest first; a long list scrolls inside its own box (css/threads.css), the panel stays put.
const list = el("ul", { id: "thread-list", class: "thread-list", "aria-label": "Saved threads, newest first" });
const turnsList = el("ol", { id: "thread-turns", class: "thread-turns", "aria-label": "Questions in this thread" });
const note = el("p", { id: "thread-note", class: "thread-note", role: "status", "aria-live": "polite" });

// What the chat sends: the opened thread's id, or nothing (a new thread).
export function threadBody() {
  return current ? { thread: current } : {};
}

function setUrl() {
  const params = new URLSearchParams(location.search);
  for (const key of ["thread", "turn", "cite"]) params.delete(key);
  if (current) params.set("thread", current);
  if (current && shownTurn !== null) params.set("turn", String(shownTurn));
  if (current && openedCite !== null) params.set("cite", String(openedCite));
  const query = params.toString();
  history.replaceState(null, "", query ? `?${query}` : location.pathname);
}

function showSearched(text) {
  searchedFor.hidden = !text;
  searchedFor.textContent = text ? `Searched for: ${text}` : "";
}

// A finished answer (chat.js's done event): it is the opened thread's newest turn now.
export function noteDone(data) {
  showSearched(data.searched_for ?? "");
  if (!data.thread) return;
  current = data.thread;
  openedCite = null;
  shownTurn = null;
  refresh().then(() => openThread(current, { show: false }));
}

async function refresh() {
  const q = search.value.trim();
  const url = q ? `/api/threads?q=${encodeURIComponent(q)}` : "/api/threads";
  let threads;
  try {
    threads = (await getJson(url, "threads")).threads;
  } catch (error) {
    say(`The threads could not be listed: ${error.message}.`, { error: true });
    return;
  }
  list.dataset.count = String(threads.length);
  list.replaceChildren(
    ...threads.map((t) => el("li", { class: "thread", "data-id": t.id }, [
      el("button", {
        type: "button",
        class: "thread-open",
        "aria-current": t.id === current ? "true" : "false",
        text: t.title,
        title: `${t.turns} question${t.turns === 1 ? "" : "s"}, last ${t.updated_at.slice(0, 16).replace("T", " ")}`,
        onclick: () => openThread(t.id),
      }),
      el("button", { type: "button", class: "thread-rename", text: "Rename", "aria-label": `Rename ${t.title}`, onclick: () => rename(t) }),
      el("button", { type: "button", class: "thread-delete", text: "Delete", "aria-label": `Delete ${t.title}`, onclick: () => remove(t) }),
    ])),
  );
  if (!threads.length) list.append(el("li", { class: "thread-none", text: q ? "No thread has these words." : "No saved threads yet." }));
}

// The documents whose citations are no longer current: their sources are not opened on a
// highlight either (the page's text moved, or the document is gone or hidden).
function markStale(answer) {
  const stale = new Map();
  for (const c of answer.citations ?? []) {
    const state = c.recheck?.state;
    if (state === "changed" || state === "deleted" || state === "hidden") stale.set(c.doc_id, c.recheck);
  }
  for (const s of answer.sources ?? []) if (stale.has(s.doc_id)) s.recheck = stale.get(s.doc_id);
  return answer;
}

// A shared thread's stored answer shown as chat.js draws it (shared.js), read-only: no
// feedback bar (the answer is not the reader's); resolves once it is drawn.
export function showStored(answer, searched) {
  return Promise.resolve(showAnswer(markStale(answer), searched ?? null, "shared"));
}

// Shows a stored turn of one's own thread, its feedback bar with it (the answer's id: the
// stored answer's, or the turn's for an answer stored without it); resolves once it is drawn.
function showTurn(turn) {
  shownTurn = turn.idx;
  const answer = { ...markStale(turn.answer), id: turn.answer.id ?? turn.answer_id };
  const drawn = showAnswer(answer, turn.searched_for ?? null, "own");
  turnsList.querySelectorAll("button").forEach((b) => b.setAttribute("aria-current", String(Number(b.dataset.idx) === turn.idx)));
  return Promise.resolve(drawn);
}

async function openThread(id, { show = true, turn = null, cite = null } = {}) {
  let data;
  try {
    data = await getJson(`/api/threads/${id}`, "thread");
  } catch (error) {
    say(`The thread could not be opened: ${error.message}.`, { error: true });
    if (id === current) { current = null; setUrl(); }
    return;
  }
  current = id;
  turnsList.replaceChildren(
    ...data.turns.map((t) => el("li", {}, [
      el("button", { type: "button", class: "thread-turn", "data-idx": String(t.idx), text: t.question, onclick: () => { openedCite = null; showTurn(t); setUrl(); } }),
    ])),
  );
  say(`Thread: ${data.title}`);
  list.querySelectorAll(".thread-open").forEach((b) => b.setAttribute("aria-current", String(b.closest("li").dataset.id === id)));
  if (show && data.turns.length) {
    const wanted = data.turns.find((t) => t.idx === turn) ?? data.turns[data.turns.length - 1];
    openedCite = null;
    await showTurn(wanted);
    if (cite !== null) sourcesList.querySelector(`.source-open[data-n="${cite}"]:not([disabled])`)?.click();
  } else if (!show) {
    shownTurn = data.turns.length ? data.turns[data.turns.length - 1].idx : null;
    turnsList.querySelectorAll("button").forEach((b) => b.setAttribute("aria-current", String(Number(b.dataset.idx) === shownTurn)));
  }
  setUrl();
}

// The live note, an error marked so (and styled): a sentence, never a console error.
function say(text, { error = false } = {}) {
  note.textContent = text;
  note.dataset.kind = error ? "error" : "done";
}

// The list is drawn anew after a change: focus goes back to the same thread's `selector`
// button, or, when that thread is gone, to its neighbour's, or to the search box, so that a
// keyboard user is never left on the page's body.
function focusIn(id, selector, index) {
  const row = list.querySelector(`.thread[data-id="${id}"]`) ?? list.querySelectorAll(".thread")[index] ?? list.querySelectorAll(".thread")[index - 1];
  (row?.querySelector(selector) ?? search).focus();
}

async function rename(thread) {
  const title = prompt("New title for this thread", thread.title);
  if (title === null) return; // cancelled
  if (!title.trim()) {
    say("Not renamed: a title cannot be empty.", { error: true });
    return;
  }
  const wanted = title.trim().slice(0, 200);
  const problem = await change("PATCH", `/api/threads/${thread.id}`, { title: wanted });
  if (problem) say(`Not renamed: ${problem}`, { error: true });
  else say(`Renamed to “${wanted}”.`);
  await refresh();
  focusIn(thread.id, ".thread-rename", 0);
}

async function remove(thread) {
  if (!confirm(`Delete the thread “${thread.title}”?`)) return;
  const index = [...list.querySelectorAll(".thread")].findIndex((row) => row.dataset.id === thread.id);
  const problem = await change("DELETE", `/api/threads/${thread.id}`);
  if (problem) say(`Not deleted: ${problem}`, { error: true });
  else {
    if (thread.id === current) newThread();
    say(`Deleted “${thread.title}”.`);
  }
  await refresh();
  focusIn(thread.id, ".thread-open", Math.max(index, 0));
}

function newThread() {
  current = null;
  shownTurn = null;
  openedCite = null;
  turnsList.replaceChildren();
  showSearched("");
  say("The next question starts a new thread.");
  list.querySelectorAll(".thread-open").forEach((b) => b.setAttribute("aria-current", "false"));
  setUrl();
}

// Which [n] was opened last, wherever it was clicked: a source, or a footnote preview's "Open".
document.addEventListener("click", (event) => {
  const target = event.target instanceof Element ? event.target : null;
  const source = target?.closest(".source-open[data-n]");
  const preview = target?.closest(".preview-open");
  const n = source?.dataset.n ?? preview?.closest(".cite-preview")?.previousElementSibling?.dataset.n;
  if (n !== undefined && current) {
    openedCite = Number(n);
    setUrl();
  }
});

let searchTimer = null;
search.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(refresh, 250);
});
search.addEventListener("keydown", (event) => {
  if (event.key === "Enter") { // at once, without waiting for the pause in typing
    clearTimeout(searchTimer);
    refresh();
  }
});

// Called once by chat.js with its renderer of a stored answer.
export function initThreads({ show }) {
  showAnswer = show;
  if (!panel) return;
  panel.replaceChildren(
    el("h2", { id: "threads-heading", text: "Threads" }),
    el("button", { type: "button", id: "new-thread", class: "new-thread", text: "New thread", onclick: newThread }),
    el("label", { for: "thread-search", text: "Search threads" }),
    search,
    list,
    el("h3", { text: "In this thread" }),
    turnsList,
    note,
  );
  const params = new URLSearchParams(location.search);
  const id = params.get("thread");
  const refreshed = refresh();
  if (id && /^[0-9a-f]{32}$/.test(id)) {
    const turn = params.has("turn") ? Number(params.get("turn")) : null;
    const cite = params.has("cite") ? Number(params.get("cite")) : null;
    refreshed.then(() => openThread(id, { turn, cite }));
  }
}
