// A user's collections of documents over /api/collections: list, create, rename, delete. Each
// change resolves to null when done, or to a sentence that says why not (a name in use, an
// empty or invalid one, a collection gone), for the page to show where the user looks, never
// as a console error. What a name may be is the server's rule (truthbase.app.collections); the
// page only checks what it can say before asking (a name left empty).
import { change, getJson } from "./dom.js";

export const NAME_MAX = 100; // truthbase.app.collections.MAX_NAME

export async function listCollections() {
  return (await getJson("/api/collections", "collections")).collections;
}

const INVALID = `A name has 1 to ${NAME_MAX} characters, with no slash.`;
const send = (method, url, body = null) => change(method, url, body, { invalid: INVALID });

const at = (name) => `/api/collections/${encodeURIComponent(name)}`;

export function createCollection(name, documents) {
  if (!name.trim()) return Promise.resolve("Give the collection a name.");
  if (!documents.length) return Promise.resolve("Choose at least one document to keep.");
  return send("POST", "/api/collections", { name: name.trim(), documents });
}

export function renameCollection(name, newName) {
  if (!newName.trim()) return Promise.resolve("Give the collection a new name.");
  return send("PATCH", at(name), { name: newName.trim() });
}

export function deleteCollection(name) {
  return send("DELETE", at(name));
}
