// Feedback under each answer: thumbs up or down on the answer, and "Wrong passage" / "Passage
// missing" on each citation, with an optional comment; POST /api/answers/{id}/feedback. The
// chat page announces each finished answer with a "truthbase:answer" event (its detail: the
// answer as the `done` event gave it, with its id in the answer log, and its `origin`: absent
// for a fresh answer, "own" for one of the user's saved threads reopened, "shared" for another's
// thread opened read-only, which gets no bar: its answers are not the reader's to report on); a
// new question clears the bar. A reopened answer's bar shows the user's own reports on it as
// given (GET /api/answers/{id}/feedback), exactly as if they had just been pressed. A later
// report of the same group replaces the earlier (the server decides).
import { change, el } from "./dom.js";

const COMMENT_MAX = 2000;
let bar = null;

async function send(answerId, body, status) {
  status.textContent = "Sending…";
  const problem = await change("POST", `/api/answers/${answerId}/feedback`, body);
  status.textContent = problem ? `Feedback not saved: ${problem}` : "Thank you: your feedback is saved.";
  return !problem;
}

function pressed(group, chosen) {
  for (const button of group) button.setAttribute("aria-pressed", String(button === chosen));
}

function reportButton(label, title, onclick) {
  return el("button", { type: "button", class: "feedback-button", title, "aria-pressed": "false", text: label, onclick });
}

function citationRow(answerId, citation, comment, status) {
  const buttons = [];
  const report = (kind) => async (event) => {
    const button = event.currentTarget; // null once the handler has awaited
    const ok = await send(answerId, { kind, citation: citation.n, comment: comment.value }, status);
    if (ok) pressed(buttons, button);
  };
  buttons.push(
    reportButton("Wrong passage", `Citation [${citation.n}] does not support what it is cited for`, report("wrong_passage")),
    reportButton("Passage missing", `The passage that supports this is not cited at [${citation.n}]`, report("passage_missing")),
  );
  for (const [i, button] of buttons.entries()) {
    button.dataset.kind = i === 0 ? "wrong_passage" : "passage_missing";
  }
  return el("li", { class: "feedback-citation", "data-n": String(citation.n) }, [
    el("span", { class: "feedback-n", text: `[${citation.n}]` }),
    ...buttons,
  ]);
}

// The user's earlier reports on a reopened answer, pressed as they were given (the newest of
// each group: the server keeps no other).
async function showGiven(answerId, shown, status) {
  let reports;
  try {
    const response = await fetch(`/api/answers/${answerId}/feedback`);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    reports = (await response.json()).reports;
  } catch (error) {
    if (bar === shown) status.textContent = `Your earlier feedback could not be read (${error.message}).`;
    return;
  }
  if (bar !== shown) return; // another answer is shown by now
  for (const report of reports) {
    const scope = report.citation === 0
      ? shown.querySelector(".feedback-votes")
      : shown.querySelector(`.feedback-citation[data-n="${report.citation}"]`);
    const chosen = scope?.querySelector(`button[data-kind="${report.kind}"]`);
    if (chosen) pressed(scope.querySelectorAll("button[data-kind]"), chosen);
  }
  shown.dataset.given = String(reports.length);
  if (reports.length) status.textContent = "Your earlier feedback on this answer is shown pressed.";
}

function render(answer, box, origin) {
  bar?.remove();
  bar = null;
  if (!Number.isInteger(answer.id) || origin === "shared") return;
  const status = el("p", { class: "feedback-status", role: "status", "aria-live": "polite" });
  const comment = el("input", {
    type: "text",
    class: "feedback-comment",
    maxlength: String(COMMENT_MAX),
    placeholder: "Optional comment",
    "aria-label": "Optional comment with your feedback",
  });
  const votes = [];
  const vote = (kind) => async (event) => {
    const button = event.currentTarget; // null once the handler has awaited
    const ok = await send(answer.id, { kind, comment: comment.value }, status);
    if (ok) pressed(votes, button);
  };
  votes.push(
    reportButton("👍", "A good answer", vote("up")),
    reportButton("👎", "A bad answer", vote("down")),
  );
  votes[0].dataset.kind = "up";
  votes[0].setAttribute("aria-label", "Thumbs up: a good answer");
  votes[1].dataset.kind = "down";
  votes[1].setAttribute("aria-label", "Thumbs down: a bad answer");
  const citations = (answer.citations ?? []).map((c) => citationRow(answer.id, c, comment, status));
  bar = el("section", { class: "feedback", "aria-label": "Feedback on this answer", "data-answer-id": String(answer.id) }, [
    el("div", { class: "feedback-votes" }, [el("span", { text: "Was this answer right?" }), ...votes, comment]),
    ...(citations.length ? [el("ul", { class: "feedback-citations", "aria-label": "Feedback on the citations" }, citations)] : []),
    status,
  ]);
  box.after(bar);
  if (origin === "own") showGiven(answer.id, bar, status);
}

document.addEventListener("truthbase:answer", (event) => render(event.detail.answer, event.detail.box, event.detail.origin));
document.getElementById("ask")?.addEventListener("submit", () => {
  bar?.remove();
  bar = null;
});
