// The PDF viewer: pdf.js renders one page; highlights are drawn from the stored rects (PDF user
// space) through the page viewport's own transform, viewport.convertToViewportRectangle, at every
// zoom and rotation. Highlight positions never come from a text layer.
//
// Zoom 1 is 100%: one PDF point is 96/72 CSS pixels (as in pdf.js's viewer), so the page's CSS
// scale is zoom * 4/3. Highlight boxes are <div class="hl hl-strong|hl-light|hl-conflict">
// children of .tb-page-layer, absolutely positioned in page pixels (CSS px from the page's
// top-left corner). "conflict" is the page's side of a claim that departs from it (conflict.js).
import * as pdfjsLib from "/pdfjs/build/pdf.mjs";

import { el, getJson } from "./dom.js";

pdfjsLib.GlobalWorkerOptions.workerSrc = "/pdfjs/build/pdf.worker.mjs";

export const CSS_UNITS = 96 / 72;
export const ZOOMS = [0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4];
const MIN_ZOOM = 0.5;
const MAX_ZOOM = 4;
// Stored page text and the PDF's own text count as the same page above this bigram similarity.
const SAME_PAGE_SIMILARITY = 0.8;
// The spans a target may name, drawn in this order after the light one (the last on top).
const HIGHLIGHT_KINDS = ["strong", "light", "conflict"];

const documents = new Map(); // doc id -> Promise<PDFDocumentProxy>
// One pdf.js worker for every document of the page: a second document opens without starting
// (and parsing) another worker.
let worker = null;

function loadDocument(doc) {
  if (!documents.has(doc)) {
    worker ??= new pdfjsLib.PDFWorker({ name: "truthbase-pdf" });
    const task = pdfjsLib.getDocument({
      worker,
      url: `/api/documents/${encodeURIComponent(doc)}/file`,
      cMapUrl: "/pdfjs/cmaps/",
      cMapPacked: true,
      standardFontDataUrl: "/pdfjs/standard_fonts/",
      isEvalSupported: false,
    });
    const promise = task.promise;
    promise.catch(() => documents.delete(doc));
    documents.set(doc, promise);
  }
  return documents.get(doc);
}

// Spans and page texts are fetched once per page view and shared with prefetch(): a citation
// opened while (or after) its answer streamed finds them loaded.
const spans = new Map(); // "doc page start end" -> Promise<span>
const pageTexts = new Map(); // "doc page" -> Promise<{content, index}>

function fetchSpan(doc, page, start, end) {
  const key = `${doc} ${page} ${start} ${end}`;
  if (!spans.has(key)) {
    const params = new URLSearchParams({ doc, page: String(page), start: String(start), end: String(end) });
    const promise = getJson(`/api/spans?${params}`, `span ${doc.slice(0, 8)} p${page} [${start}, ${end})`);
    promise.catch(() => spans.delete(key));
    spans.set(key, promise);
  }
  return spans.get(key);
}

function pageText(doc, pdf, pageNumber) {
  const key = `${doc} ${pageNumber}`;
  if (!pageTexts.has(key)) {
    const promise = pdf
      .getPage(pageNumber)
      .then((page) => page.getTextContent())
      .then((content) => ({ content, index: indexTextContent(content) }));
    promise.catch(() => pageTexts.delete(key));
    pageTexts.set(key, promise);
  }
  return pageTexts.get(key);
}

// Warm what opening target will need (the document, its page, the page's text, the spans), so
// that open() only draws. Failures are left for open() to report.
export function prefetch(target) {
  const pdf = loadDocument(target.doc);
  for (const kind of HIGHLIGHT_KINDS) {
    const span = target[kind];
    if (span) fetchSpan(target.doc, target.page, span.start, span.end).catch(() => {});
  }
  pdf.then((p) => pageText(target.doc, p, target.page)).catch(() => {});
}

// Text normalization for comparisons: case-folded letters and digits only.
function squash(text) {
  return text.normalize("NFKC").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

function bigramSimilarity(a, b) {
  // Dice coefficient over character bigram multisets.
  if (a.length < 2 || b.length < 2) return a === b ? 1 : 0;
  const counts = new Map();
  for (let i = 0; i < a.length - 1; i++) {
    const g = a.slice(i, i + 2);
    counts.set(g, (counts.get(g) ?? 0) + 1);
  }
  let shared = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const g = b.slice(i, i + 2);
    const c = counts.get(g) ?? 0;
    if (c > 0) {
      shared++;
      counts.set(g, c - 1);
    }
  }
  return (2 * shared) / (a.length - 1 + b.length - 1);
}

// The page's text as pdf.js reads it, squashed, with each squashed char's (item, char) origin.
function indexTextContent(content) {
  const chars = [];
  const origin = [];
  content.items.forEach((item, itemIndex) => {
    if (typeof item.str !== "string") return;
    for (let i = 0; i < item.str.length; i++) {
      const s = squash(item.str[i]);
      for (const ch of s) {
        chars.push(ch);
        origin.push([itemIndex, i]);
      }
    }
  });
  return { text: chars.join(""), origin };
}

// Rects (PDF user space) of the text items' characters that the squashed range [from, to) covers:
// the passage found by its text. Per item, the characters' share of the item's advance width.
function rectsFromText(content, index, from, to) {
  const ranges = new Map(); // item -> [first char, last char]
  for (let k = from; k < to; k++) {
    const [item, ch] = index.origin[k];
    const range = ranges.get(item);
    if (range) range[1] = Math.max(range[1], ch);
    else ranges.set(item, [ch, ch]);
  }
  const rects = [];
  for (const [itemIndex, [first, last]] of ranges) {
    const item = content.items[itemIndex];
    const [a, b, c, d, e, f] = item.transform;
    const n = Math.max(item.str.length, 1);
    const along = Math.hypot(a, b) || 1;
    const dir = [a / along, b / along];
    const up = [-dir[1], dir[0]];
    const size = item.height || Math.hypot(c, d) || 10;
    const t0 = (item.width * first) / n;
    const t1 = (item.width * (last + 1)) / n;
    const corners = [];
    for (const t of [t0, t1]) {
      for (const v of [-0.25 * size, 0.9 * size]) {
        corners.push([e + dir[0] * t + up[0] * v, f + dir[1] * t + up[1] * v]);
      }
    }
    const xs = corners.map((p) => p[0]);
    const ys = corners.map((p) => p[1]);
    rects.push([Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]);
  }
  // One rect per line: merge pieces whose vertical bands mostly overlap.
  const lines = [];
  for (const r of rects) {
    const line = lines.find((l) => {
      const overlap = Math.min(l[3], r[3]) - Math.max(l[1], r[1]);
      return overlap > 0.5 * Math.min(l[3] - l[1], r[3] - r[1]);
    });
    if (line) {
      line[0] = Math.min(line[0], r[0]);
      line[1] = Math.min(line[1], r[1]);
      line[2] = Math.max(line[2], r[2]);
      line[3] = Math.max(line[3], r[3]);
    } else lines.push([...r]);
  }
  return lines;
}

export function parseZoom(value) {
  if (value === "fit" || value === "fit-width") return "fit";
  const z = Number(value);
  if (!Number.isFinite(z) || z <= 0) return 1;
  return Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, z > 10 ? z / 100 : z));
}

export class Viewer {
  // root: an element to build the viewer in. options.onClose: called after Escape / close.
  constructor(root, { onClose = null, closable = true } = {}) {
    this.root = root;
    this.onClose = onClose;
    this.target = null;
    this.zoom = 1;
    this.rotation = 0; // the user's extra rotation, on top of the page's own
    this.pageNumber = 1;
    this.renderId = 0;
    this.renderTask = null;
    this.build(closable);
  }

  build(closable) {
    this.root.classList.add("viewer");
    this.root.setAttribute("role", "region");
    this.root.setAttribute("aria-label", "Document viewer");
    this.root.dataset.viewerState = "idle";
    this.title = el("h2", { class: "viewer-title", id: "viewer-title", tabindex: "-1" });
    this.pageInfo = el("span", { class: "viewer-pageinfo", "aria-live": "polite" });
    this.badge = el("span", { class: "badge", role: "status", hidden: "" });
    this.zoomSelect = el("select", { "aria-label": "Zoom", class: "zoom-select" }, [
      ...ZOOMS.map((z) => el("option", { value: String(z), text: `${Math.round(z * 100)}%` })),
      el("option", { value: "fit", text: "Fit width" }),
    ]);
    this.zoomSelect.addEventListener("change", () => this.setZoom(parseZoom(this.zoomSelect.value)));
    const button = (label, text, handler) =>
      el("button", { type: "button", class: "tool", "aria-label": label, title: label, text, onclick: handler });
    const tools = el("div", { class: "viewer-tools", role: "toolbar", "aria-label": "Viewer tools" }, [
      button("Previous page", "‹", () => this.goTo(this.pageNumber - 1)),
      this.pageInfo,
      button("Next page", "›", () => this.goTo(this.pageNumber + 1)),
      button("Zoom out", "−", () => this.stepZoom(-1)),
      this.zoomSelect,
      button("Zoom in", "+", () => this.stepZoom(1)),
      button("Rotate clockwise", "⟳", () => this.setRotation((this.rotation + 90) % 360)),
    ]);
    if (closable) {
      this.closeButton = button("Close viewer (Escape)", "×", () => this.close());
      tools.append(this.closeButton);
    }
    this.legend = el("p", { class: "viewer-legend" }, [
      el("span", { class: "swatch swatch-strong", "aria-hidden": "true" }),
      " cited sentence ",
      el("span", { class: "swatch swatch-light", "aria-hidden": "true" }),
      " its passage",
    ]);
    this.conflictLegend = el("span", { class: "legend-conflict", hidden: "" }, [
      " ",
      el("span", { class: "swatch swatch-conflict", "aria-hidden": "true" }),
      " where the claim departs from the page",
    ]);
    this.legend.append(this.conflictLegend);
    this.error = el("p", { class: "viewer-error", role: "alert", hidden: "" });
    this.scroller = el("div", { class: "viewer-scroll", tabindex: "0", "aria-label": "Page" });
    this.root.replaceChildren(
      el("div", { class: "viewer-head" }, [this.title, tools]),
      el("div", { class: "viewer-sub" }, [this.legend, this.badge]),
      this.error,
      this.scroller,
    );
    this.root.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && closable) {
        event.preventDefault();
        this.close();
      }
    });
    this.resizeObserver = new ResizeObserver(() => {
      if (this.zoom === "fit" && this.target) this.render();
    });
    this.resizeObserver.observe(this.scroller);
  }

  // target: {doc, page, strong: {start, end} | null, light: {start, end} | null,
  //          conflict?: {start, end} | null, title?}
  async open(target, { zoom = null, rotation = null } = {}) {
    this.target = target;
    this.pageNumber = target.page;
    this.conflictLegend.hidden = !target.conflict;
    if (zoom !== null) this.zoom = parseZoom(zoom);
    if (rotation !== null) this.rotation = ((Number(rotation) % 360) + 360) % 360;
    this.zoomSelect.value = String(this.zoom);
    this.root.hidden = false;
    return this.render({ locate: true });
  }

  close() {
    this.root.hidden = true;
    this.root.dataset.viewerState = "closed";
    if (this.renderTask) this.renderTask.cancel();
    if (this.onClose) this.onClose();
  }

  stepZoom(direction) {
    const current = this.zoom === "fit" ? this.currentScale / CSS_UNITS : this.zoom;
    const next = direction > 0 ? ZOOMS.find((z) => z > current + 1e-6) : [...ZOOMS].reverse().find((z) => z < current - 1e-6);
    if (next !== undefined) this.setZoom(next);
  }

  setZoom(zoom) {
    this.zoom = zoom;
    this.zoomSelect.value = String(zoom);
    if (this.target) return this.render();
  }

  setRotation(rotation) {
    this.rotation = rotation;
    if (this.target) return this.render();
  }

  goTo(pageNumber) {
    if (!this.pdf || pageNumber < 1 || pageNumber > this.pdf.numPages) return;
    this.pageNumber = pageNumber;
    return this.render();
  }

  setBadge(text, kind) {
    this.badge.hidden = !text;
    this.badge.textContent = text || "";
    this.badge.className = `badge ${kind || ""}`;
  }

  // Find where the highlights go: the stored rects when the file's page text still matches the
  // stored text, else the passage found by its text ("approximate").
  async locate(target) {
    const spans = {};
    // Both spans at once, and the page's text beside them (it is not needed for an OCR page).
    const text = pageText(target.doc, this.pdf, target.page);
    text.catch(() => {});
    const kinds = HIGHLIGHT_KINDS.filter((kind) => target[kind]);
    const fetched = await Promise.all(
      kinds.map((kind) => fetchSpan(target.doc, target.page, target[kind].start, target[kind].end)),
    );
    kinds.forEach((kind, i) => {
      spans[kind] = fetched[i];
    });
    const any = spans.strong ?? spans.light;
    this.title.textContent = target.title ?? any?.title ?? "Document";
    const stored = { page: target.page, boxes: Object.entries(spans).map(([kind, s]) => ({ kind, rects: s.rects })) };
    if (any?.text_source === "ocr") {
      // An OCR'd page has no text layer to compare with: the file's own hash tells whether the
      // stored rects fit it, and its words cannot be looked for in it if it changed.
      if (any.file_matches) return { ...stored, approximate: false, similarity: 1 };
      return { ...stored, approximate: true, notFound: true, similarity: 0 };
    }
    const page = await this.pdf.getPage(target.page);
    const { content, index } = await text;
    const similarity = any ? bigramSimilarity(squash(any.page_text), index.text) : 1;
    if (similarity >= SAME_PAGE_SIMILARITY) {
      return {
        page: target.page,
        approximate: false,
        similarity,
        boxes: Object.entries(spans).map(([kind, s]) => ({ kind, rects: s.rects })),
      };
    }
    // The file changed since ingest: look for each passage by its text, cited page first.
    const order = [target.page];
    for (let d = 1; d <= this.pdf.numPages; d++) {
      if (target.page - d >= 1) order.push(target.page - d);
      if (target.page + d <= this.pdf.numPages) order.push(target.page + d);
    }
    const wanted = Object.entries(spans).map(([kind, s]) => ({ kind, text: squash(s.text) }));
    const needle = (wanted.find((w) => w.kind === "strong") ?? wanted[0])?.text ?? "";
    for (const n of order) {
      const p = n === target.page ? page : await this.pdf.getPage(n);
      const c = n === target.page ? content : await p.getTextContent();
      const idx = n === target.page ? index : indexTextContent(c);
      const at = needle ? idx.text.indexOf(needle) : -1;
      if (at < 0) continue;
      const boxes = [];
      for (const w of wanted) {
        const from = idx.text.indexOf(w.text);
        if (from >= 0) boxes.push({ kind: w.kind, rects: rectsFromText(c, idx, from, from + w.text.length) });
      }
      return { page: n, approximate: true, similarity, boxes };
    }
    return { page: target.page, approximate: true, notFound: true, similarity, boxes: Object.entries(spans).map(([kind, s]) => ({ kind, rects: s.rects })) };
  }

  async render({ locate = false } = {}) {
    const id = ++this.renderId;
    this.root.dataset.viewerState = "loading";
    this.root.dataset.highlightState = "pending";
    this.error.hidden = true;
    try {
      if (locate) prefetch(this.target); // the spans load beside the document
      this.pdf = await loadDocument(this.target.doc);
      if (locate) {
        this.placement = await this.locate(this.target);
        if (id !== this.renderId) return;
        this.pageNumber = this.placement.page;
        if (this.placement.notFound) this.setBadge("approximate: this file changed and the passage was not found in it", "warn");
        else if (this.placement.approximate) this.setBadge("approximate: found by its text (the file changed since it was indexed)", "warn");
        else this.setBadge("", "");
      }
      const page = await this.pdf.getPage(this.pageNumber);
      if (id !== this.renderId) return;
      const rotation = (page.rotate + this.rotation) % 360;
      let scale;
      if (this.zoom === "fit") {
        const unit = page.getViewport({ scale: 1, rotation });
        const width = Math.max(this.scroller.clientWidth - 24, 100);
        scale = width / unit.width;
      } else scale = this.zoom * CSS_UNITS;
      this.currentScale = scale;
      const viewport = page.getViewport({ scale, rotation });
      const outputScale = window.devicePixelRatio || 1;
      const canvas = el("canvas", { class: "tb-canvas", "aria-hidden": "true" });
      canvas.width = Math.floor(viewport.width * outputScale);
      canvas.height = Math.floor(viewport.height * outputScale);
      canvas.style.width = `${viewport.width}px`;
      canvas.style.height = `${viewport.height}px`;
      const layer = el("div", { class: "tb-page-layer" });
      const pageBox = el("div", {
        class: "tb-page",
        "data-page": String(this.pageNumber),
        "data-scale": String(scale),
        "data-rotation": String(rotation),
        "data-view-box": page.view.join(","),
        role: "img",
        "aria-label": `Page ${this.pageNumber} of ${this.pdf.numPages}`,
      }, [canvas, layer]);
      pageBox.style.width = `${viewport.width}px`;
      pageBox.style.height = `${viewport.height}px`;
      const drawn = this.drawHighlights(layer, viewport);
      // A newly opened span shows its highlight as soon as the page's viewport is known, on the
      // page's blank box, and the page's pixels follow; a zoom or a rotation keeps the old page
      // until the new one is drawn (no blank flash).
      if (locate) this.show(pageBox, drawn, id);
      if (this.renderTask) this.renderTask.cancel();
      this.renderTask = page.render({
        canvasContext: canvas.getContext("2d"),
        viewport,
        transform: outputScale !== 1 ? [outputScale, 0, 0, outputScale, 0, 0] : null,
      });
      try {
        await this.renderTask.promise;
      } catch (error) {
        if (error?.name === "RenderingCancelledException") return;
        throw error;
      }
      if (id !== this.renderId) return;
      if (!locate) this.show(pageBox, drawn, id);
      // "ready": the highlight and the page's pixels are both drawn.
      this.root.dataset.viewerState = "ready";
      this.root.dataset.renderId = String(id);
      this.root.dispatchEvent(new CustomEvent("viewer-ready", { bubbles: true }));
    } catch (error) {
      if (id !== this.renderId) return;
      this.error.hidden = false;
      this.error.textContent = `Could not show the document: ${error.message ?? error}`;
      this.root.dataset.viewerState = "error";
    }
  }

  // Put the page box in the viewer and centre its first (strong) highlight in view.
  show(pageBox, drawn, id) {
    this.scroller.replaceChildren(pageBox);
    this.pageInfo.textContent = `Page ${this.pageNumber} / ${this.pdf.numPages}`;
    this.zoomSelect.value = this.zoom === "fit" ? "fit" : String(this.zoom);
    const first = drawn.find((d) => d.classList.contains("hl-strong")) ?? drawn[0];
    if (first) {
      // Scroll the page inside the viewer (not the window) so the highlight sits in the middle.
      const s = this.scroller.getBoundingClientRect();
      const b = first.getBoundingClientRect();
      this.scroller.scrollTop += b.top - s.top - (this.scroller.clientHeight - b.height) / 2;
      this.scroller.scrollLeft += b.left - s.left - (this.scroller.clientWidth - b.width) / 2;
    }
    // "drawn": the highlight boxes are on screen (the page's pixels may still be coming).
    this.root.dataset.highlightState = "drawn";
    this.root.dataset.highlightId = String(id);
  }

  drawHighlights(layer, viewport) {
    const placement = this.placement;
    if (!placement || placement.page !== this.pageNumber) return [];
    const drawn = [];
    // Light (the chunk) below strong (the cited sentence).
    const ordered = [
      ...placement.boxes.filter((b) => b.kind === "light"),
      ...placement.boxes.filter((b) => b.kind !== "light"),
    ];
    for (const { kind, rects } of ordered) {
      rects.forEach((rect, i) => {
        const [x1, y1, x2, y2] = viewport.convertToViewportRectangle(rect);
        const left = Math.min(x1, x2);
        const top = Math.min(y1, y2);
        const width = Math.abs(x2 - x1);
        const height = Math.abs(y2 - y1);
        const box = el("div", {
          class: `hl hl-${kind}${placement.approximate ? " hl-approximate" : ""}`,
          "data-kind": kind,
          "data-line": String(i),
          "data-pdf-rect": rect.join(","),
          "data-left": String(left),
          "data-top": String(top),
          "data-width": String(width),
          "data-height": String(height),
          "data-approximate": placement.approximate ? "true" : "false",
        });
        box.style.left = `${left}px`;
        box.style.top = `${top}px`;
        box.style.width = `${width}px`;
        box.style.height = `${height}px`;
        layer.append(box);
        drawn.push(box);
      });
    }
    return drawn;
  }
}
