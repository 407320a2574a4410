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
