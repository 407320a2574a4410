// Who is signed in, shown in the page header: the single local user (no accounts), or the
// user's name with a sign-out button (a same-origin POST; the session cookie is HttpOnly).
export async function showWho() {
  const who = document.getElementById("who");
  if (!who) return;
  let me;
  try {
    const response = await fetch("/api/me");
    if (!response.ok) return;
    me = await response.json();
  } catch {
    return;
  }
  who.textContent = "";
  if (me.mode === "local") {
    who.textContent = "Single local user (no accounts): every document is yours.";
    return;
  }
  const name = document.createElement("span");
  name.textContent = `Signed in as ${me.user}${me.admin ? " (admin)" : ""}.`;
  who.append(name, " ");
  if (me.admin) {
    const admin = document.createElement("a");
    admin.href = "/admin";
    admin.textContent = "Usage";
    who.append(admin, " ");
  }
  const form = document.createElement("form");
  form.method = "post";
  form.action = "/logout";
  form.className = "logout";
  const button = document.createElement("button");
  button.type = "submit";
  button.textContent = "Sign out";
  form.append(button);
  who.append(form);
}
