// Shared threads on the chat page. The owner of the opened thread gets "Share" (its read-only
// link, shown to copy) and "Revoke" under the threads panel. A link, /?shared=TOKEN, opens the
// thread read-only: its questions listed above the answer, each showing its answer as it was
// given (citations checked again, highlights opening as in one's own thread); the question form
// is hidden, since nothing can be added to another's thread. The server decides who may open a
// link (GET /api/shared/TOKEN): anyone else gets the same "no such shared thread".
import { el, getJson } from "./dom.js";
import { showStored } from "./threads.js";

const panel = document.getElementById("threads");
const form = document.getElementById("ask");
const answerBox = document.getElementById("answer");

function openedThread() {
  const id = new URLSearchParams(location.search).get("thread");
  return id && /^[0-9a-f]{32}$/.test(id) ? id : null;
}

// "Share" and "Revoke" for the opened thread of one's own.
function shareControls() {
  const link = el("input", { id: "share-link", type: "text", readonly: "", "aria-label": "Read-only link to this thread", hidden: "" });
  const note = el("p", { id: "share-note", class: "thread-note", role: "status", "aria-live": "polite" });

  async function call(method) {
    const id = openedThread();
    if (!id) {
      note.textContent = "Open a thread first.";
      return null;
    }
    const response = await fetch(`/api/threads/${id}/share`, { method });
    if (!response.ok) {
      note.textContent = `${method === "POST" ? "Share" : "Revoke"} failed (HTTP ${response.status}).`;
      return null;
    }
    return response;
  }

  async function share() {
    const response = await call("POST");
    if (!response) return;
    const { url } = await response.json();
    link.value = new URL(url, location.origin).href;
    link.hidden = false;
    link.select();
    note.textContent = "Read-only link: it opens for signed-in users who may see every cited document.";
  }

  async function revoke() {
    if (!(await call("DELETE"))) return;
    link.value = "";
    link.hidden = true;
    note.textContent = "The link is revoked.";
  }

  return el("div", { class: "thread-share" }, [
    el("button", { type: "button", id: "share-thread", text: "Share", onclick: share }),
    el("button", { type: "button", id: "revoke-share", text: "Revoke", onclick: revoke }),
    link,
    note,
  ]);
}

// The shared thread, read-only: its title, its questions, the last one's answer shown.
async function openShared(token) {
  const box = el("section", { id: "shared-thread", class: "shared-thread", "aria-labelledby": "shared-heading" });
  answerBox.closest("section").before(box);
  if (form) form.hidden = true;
  let data;
  try {
    data = await getJson(`/api/shared/${encodeURIComponent(token)}`, "shared thread");
  } catch (error) {
    box.replaceChildren(el("h2", { id: "shared-heading", text: "Shared thread" }), el("p", { class: "shared-error", role: "alert", text: error.message }));
    return;
  }
  const turns = el("ol", { id: "shared-turns", class: "thread-turns", "aria-label": "Questions in the shared thread" });
  const show = (turn) => {
    turns.querySelectorAll("button").forEach((b) => b.setAttribute("aria-current", String(Number(b.dataset.idx) === turn.idx)));
    return showStored(turn.answer, turn.searched_for);
  };
  turns.replaceChildren(...data.turns.map((t) => el("li", {}, [
    el("button", { type: "button", class: "thread-turn", "data-idx": String(t.idx), text: t.question, onclick: () => show(t) }),
  ])));
  box.replaceChildren(
    el("h2", { id: "shared-heading", text: `Shared thread (read-only): ${data.title}` }),
    turns,
    el("a", { href: "/", text: "Ask your own questions" }),
  );
  if (data.turns.length) await show(data.turns[data.turns.length - 1]);
}

if (panel) panel.append(shareControls());
const token = new URLSearchParams(location.search).get("shared");
if (token) openShared(token);
