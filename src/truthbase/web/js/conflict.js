// Where a claim departs from its page (issue 24 item 5). A quote_only citation carries its
// conflict: the failing check and the two sides ("the answer says 85% · the page says 87%"),
// with the page's side located in the unit text (page_start, page_end). The chat page shows the
// note under the citation's quote; the viewer marks the page's side as the highlight kind
// "conflict" (its own colour and a dashed outline, distinct from the supporting sentence).
import { el } from "./dom.js";

// The page's side of a citation's conflict as a span of its unit's text, or null (no conflict,
// or one whose page side was not located).
export function conflictSpan(citation) {
  const conflict = citation?.conflict;
  if (!conflict || conflict.page_start == null || conflict.page_end == null) return null;
  return { start: conflict.page_start, end: conflict.page_end };
}

// The note under a citation's quote: the two sides of its conflict; null without one.
export function conflictNote(citation) {
  const conflict = citation?.conflict;
  if (!conflict || !(conflict.claim_says || conflict.page_says)) return null;
  const sides = [];
  if (conflict.claim_says) {
    sides.push(el("span", { class: "conflict-claim" }, ["the answer says ", el("strong", { text: conflict.claim_says })]));
  }
  if (conflict.page_says) {
    sides.push(el("span", { class: "conflict-page" }, ["the page says ", el("mark", { class: "conflict-mark", text: conflict.page_says })]));
  }
  const children = [el("span", { class: "conflict-label", text: "Departs from the page: " })];
  sides.forEach((side, i) => {
    if (i) children.push(" · ");
    children.push(side);
  });
  return el("span", { class: "preview-conflict", "data-code": conflict.code, title: conflict.message }, children);
}
