// /view?doc=ID&page=N&start=S&end=E[&cstart=S2&cend=E2][&conflict_start=S3&conflict_end=E3]
//   [&zoom=1|0.5|200|fit][&rotation=90]
// Opens one span directly: strong = [start, end), light = [cstart, cend), conflict = the page's
// side of a claim's conflict [conflict_start, conflict_end) (all optional).
import { Viewer } from "./viewer.js";

const params = new URLSearchParams(location.search);
const root = document.getElementById("viewer");
const viewer = new Viewer(root, { closable: false });
window.truthbaseViewer = viewer;

function span(startKey, endKey) {
  if (!params.has(startKey) || !params.has(endKey)) return null;
  return { start: Number(params.get(startKey)), end: Number(params.get(endKey)) };
}

const doc = params.get("doc");
if (!doc) {
  root.textContent = "Name a span: /view?doc=ID&page=N&start=S&end=E";
} else {
  viewer.open(
    { doc, page: Number(params.get("page") ?? 1), strong: span("start", "end"), light: span("cstart", "cend"), conflict: span("conflict_start", "conflict_end") },
    { zoom: params.get("zoom") ?? 1, rotation: params.get("rotation") ?? 0 },
  );
}
