// The admin page's latest reports: GET /api/feedback as a table (text only: names, questions and
// comments are never parsed as HTML).
const rows = document.getElementById("feedback-rows");
const status = document.getElementById("feedback-status");
const KINDS = { up: "👍 up", down: "👎 down", wrong_passage: "wrong passage", passage_missing: "passage missing" };

const response = await fetch("/api/feedback");
if (!response.ok) {
  status.textContent = `Cannot read the reports (${response.status}).`;
} else {
  const { reports } = await response.json();
  status.textContent = reports.length ? `The latest ${reports.length} reports, newest first.` : "No reports yet.";
  for (const r of reports) {
    const tr = document.createElement("tr");
    tr.dataset.kind = r.kind;
    const cells = [r.created_at, r.user ?? "(local)", r.question, r.answer_id,
      r.citation ? `[${r.citation}]` : "answer", KINDS[r.kind] ?? r.kind, r.comment];
    for (const value of cells) {
      const td = document.createElement("td");
      td.textContent = String(value);
      tr.append(td);
    }
    rows.append(tr);
  }
}
