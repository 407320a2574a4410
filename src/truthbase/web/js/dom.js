// Helpers shared by the chat page, the PDF viewer and the EPUB reader.

// An element with attributes ("class", "text", "on<event>" handlers, others as attributes) and
// children.
export function el(tag, attrs = {}, children = []) {
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

// GET `url` as JSON; a failed request throws an Error "<what>: <the server's detail>".
export async function getJson(url, what = url) {
  const response = await fetch(url);
  if (!response.ok) {
    let detail = response.statusText;
    try {
      detail = (await response.json()).detail ?? detail;
    } catch { /* not JSON */ }
    throw new Error(`${what}: ${detail}`);
  }
  return response.json();
}

// The reason a server refused a request, as a sentence: its `detail` when it gave one in words
// (400, 404), `invalid` for a body it refused outright (422), else the HTTP status.
async function refusalSentence(response, invalid) {
  let detail = null;
  try {
    detail = (await response.json()).detail;
  } catch { /* not JSON */ }
  if (typeof detail === "string" && detail) {
    const text = detail.charAt(0).toUpperCase() + detail.slice(1);
    return /[.!?]$/.test(text) ? text : `${text}.`;
  }
  if (response.status === 422 && invalid) return invalid;
  return `The server answered HTTP ${response.status}.`;
}

// A change (POST, PATCH, DELETE with an optional JSON body): null when it was made, else why
// not as a sentence, for the page to show where the user looks; it never throws, so that no
// refusal or lost connection ends up as a console error instead.
export async function change(method, url, body = null, { invalid = "" } = {}) {
  let response;
  try {
    response = await fetch(url, {
      method,
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (error) {
    return `The server could not be reached (${error.message}).`;
  }
  return response.ok ? null : refusalSentence(response, invalid);
}
