// The admin page: GET /api/admin/usage as a table (text only: names are never parsed as HTML).
import { showWho } from "./who.js";

showWho();
const limitText = (v) => (v === null || v === undefined ? "unlimited" : String(v));
const response = await fetch("/api/admin/usage");
const rows = document.getElementById("usage-rows");
if (!response.ok) {
  document.getElementById("limits").textContent = `Cannot read usage (${response.status}).`;
} else {
  const body = await response.json();
  const l = body.limits;
  document.getElementById("limits").textContent =
    `Limits per user: ${limitText(l.chats_per_minute)} chats a minute, ${limitText(l.chats_per_day)} a day, ` +
    `${limitText(l.agent_per_day)} agent chats a day; all users together ${limitText(l.global_per_day)} a day.`;
  for (const u of body.users) {
    const tr = document.createElement("tr");
    const cells = [u.name, u.admin ? "yes" : "no", u.chats_this_minute, u.chats_today, u.agent_today,
      `${u.documents} (${u.private_documents})`, u.tokens];
    for (const value of cells) {
      const td = document.createElement("td");
      td.textContent = String(value);
      tr.append(td);
    }
    rows.append(tr);
  }
}
