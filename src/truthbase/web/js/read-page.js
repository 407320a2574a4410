// /read?doc=ID&unit=N[&start=S&end=E][&cstart=S2&cend=E2]: one EPUB section in the reader, with
// canonical span [start, end) highlighted (strong) and [cstart, cend) (light); both optional.
import { Reader } from "./reader.js";

const params = new URLSearchParams(location.search);
const root = document.getElementById("reader");

function span(startKey, endKey) {
  if (!params.has(startKey) || !params.has(endKey)) return null;
  return { start: Number(params.get(startKey)), end: Number(params.get(endKey)) };
}

// Keep the address bar on the section shown (prev/next, in-book links); the cited span stays
// in the address only while its section is shown.
function onNavigate(section, target) {
  const next = new URLSearchParams({ doc: section.doc, unit: String(section.unit) });
  if (section.unit === target.unit) {
    for (const key of ["start", "end", "cstart", "cend"]) if (params.has(key)) next.set(key, params.get(key));
  }
  history.replaceState(null, "", `/read?${next}${location.hash}`);
  document.title = `${section.label || section.href} · ${section.title} · TruthBase reader`;
}

const reader = new Reader(root, { closable: false, onNavigate });
window.truthbaseReader = reader;

const doc = params.get("doc");
if (!doc) {
  root.textContent = "Name a section: /read?doc=ID&unit=N[&start=S&end=E]";
} else {
  reader.open({
    doc,
    unit: Number(params.get("unit") ?? 0),
    strong: span("start", "end"),
    light: span("cstart", "cend"),
  });
}
