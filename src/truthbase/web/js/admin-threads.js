// The admin page's saved threads per user: GET /api/admin/threads as a table of counts. An admin
// is shown how many threads and turns each user keeps, never their contents (the server decides:
// truthbase.app.threads); names are set as text, never parsed as HTML.
const rows = document.getElementById("thread-rows");
const status = document.getElementById("threads-status");

const response = await fetch("/api/admin/threads");
if (!response.ok) {
  status.textContent = `Cannot read the thread counts (${response.status}).`;
} else {
  const { users } = await response.json();
  const threads = users.reduce((sum, u) => sum + u.threads, 0);
  status.textContent = users.length
    ? `${threads} saved threads kept by ${users.length} users (counts only: an admin never sees their contents).`
    : "No saved threads yet.";
  for (const u of users) {
    const tr = document.createElement("tr");
    for (const value of [u.user, u.threads, u.turns]) {
      const td = document.createElement("td");
      td.textContent = String(value);
      tr.append(td);
    }
    rows.append(tr);
  }
}
