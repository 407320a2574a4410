// The login page: posts the name and password as JSON, then goes where the user was headed.
const params = new URLSearchParams(window.location.search);
const next = params.get("next") || "/";
const status = document.getElementById("login-status");
document.getElementById("next").value = next;
if (params.get("failed")) status.textContent = "Wrong name or password.";

document.getElementById("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = document.getElementById("login-button");
  button.disabled = true;
  status.textContent = "Signing in…";
  try {
    const response = await fetch("/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        name: document.getElementById("name").value,
        password: document.getElementById("password").value,
        next,
      }),
    });
    if (response.ok) {
      const body = await response.json();
      window.location.assign(body.next || "/");
      return;
    }
    status.textContent = response.status === 401 ? "Wrong name or password." : `Sign-in failed (${response.status}).`;
  } catch (error) {
    status.textContent = `Sign-in failed: ${error}`;
  }
  button.disabled = false;
  document.getElementById("password").select();
});
