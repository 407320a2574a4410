// The EPUB reader: one book section (spine item) rendered from the server's sanitized XHTML in a
// sandboxed same-origin frame (no scripts run in it; its Content-Security-Policy loads nothing
// remote), with a canonical character range highlighted exactly.
//
// The server maps a span (doc, unit, start, end) to text-node pieces through the stored DOM map
// (GET /api/epub/spans): each piece is a node path from <body> (element-child indexes, then the
// text node's index among its parent's text nodes) and code-point offsets in that node. Here each
// piece becomes a DOM Range, shown with the CSS Custom Highlight API (names tb-strong and
// tb-light; <mark> elements where the API is missing). Highlight positions therefore come from
// the stored map, never from searching the rendered text.

import { el, getJson } from "./dom.js";

const SANDBOX = "allow-same-origin allow-top-navigation-by-user-activation";

// The text node a node path names in `body`, or null.
export function resolvePath(body, path) {
  let node = body;
  for (const i of path.slice(0, -1)) {
    node = node.children[i];
    if (!node) return null;
  }
  const texts = [...node.childNodes].filter((c) => c.nodeType === 3); // Node.TEXT_NODE
  return texts[path[path.length - 1]] ?? null;
}

// A code-point offset into `data` as the UTF-16 offset DOM ranges count.
export function utf16Offset(data, codePoints) {
  let units = 0;
  let k = 0;
  for (const ch of data) {
    if (k === codePoints) break;
    units += ch.length;
    k++;
  }
  return units;
}

export class Reader {
  // root: an element to build the reader in. options.onClose: called after Escape / close;
  // options.onNavigate(section): called after a section is shown (the page updates its URL).
  constructor(root, { onClose = null, onNavigate = null, closable = true } = {}) {
    this.root = root;
    this.onClose = onClose;
    this.onNavigate = onNavigate;
    this.closable = closable;
    this.target = null;
    this.unit = 0;
    this.renderId = 0;
    this.ranges = { strong: [], light: [] };
    this.build();
  }

  build() {
    this.root.classList.add("viewer", "reader");
    this.root.setAttribute("role", "region");
    this.root.setAttribute("aria-label", "Book reader");
    this.root.dataset.readerState = "idle";
    this.title = el("h2", { class: "viewer-title", id: "reader-title", tabindex: "-1" });
    this.sectionInfo = el("span", { class: "viewer-pageinfo", "aria-live": "polite" });
    const button = (label, text, handler) =>
      el("button", { type: "button", class: "tool", "aria-label": label, title: label, text, onclick: handler });
    this.prevButton = button("Previous section", "‹", () => this.step(-1));
    this.nextButton = button("Next section", "›", () => this.step(1));
    const tools = el("div", { class: "viewer-tools", role: "toolbar", "aria-label": "Reader tools" }, [
      this.prevButton,
      this.sectionInfo,
      this.nextButton,
    ]);
    if (this.closable) {
      this.closeButton = button("Close reader (Escape)", "×", () => this.close());
      tools.append(this.closeButton);
    }
    this.legend = el("p", { class: "viewer-legend" }, [
      el("span", { class: "swatch swatch-strong", "aria-hidden": "true" }),
      " cited passage ",
      el("span", { class: "swatch swatch-light", "aria-hidden": "true" }),
      " its context",
    ]);
    this.error = el("p", { class: "viewer-error", role: "alert", hidden: "" });
    this.frame = el("iframe", {
      class: "reader-frame",
      sandbox: SANDBOX,
      title: "Book section",
      referrerpolicy: "no-referrer",
    });
    this.root.replaceChildren(
      el("div", { class: "viewer-head" }, [this.title, tools]),
      el("div", { class: "viewer-sub" }, [this.legend]),
      this.error,
      el("div", { class: "reader-body" }, [this.frame]),
    );
    this.root.addEventListener("keydown", (event) => this.onKey(event));
  }

  onKey(event) {
    if (event.key === "Escape" && this.closable) {
      event.preventDefault();
      this.close();
    }
  }

  // target: {doc, unit, strong: {start, end} | null, light: {start, end} | null, title?}
  async open(target) {
    this.target = target;
    this.unit = target.unit;
    this.root.hidden = false;
    return this.render({ locate: true });
  }

  close() {
    this.root.hidden = true;
    this.root.dataset.readerState = "closed";
    this.renderId++;
    if (this.onClose) this.onClose();
  }

  step(direction) {
    const next = direction < 0 ? this.section?.prev : this.section?.next;
    if (next !== null && next !== undefined) return this.goTo(next);
  }

  goTo(unit, { fragment = null } = {}) {
    this.unit = unit;
    return this.render({ locate: false, fragment });
  }

  showError(message) {
    this.error.textContent = message;
    this.error.hidden = false;
  }

  loadFrame(url) {
    return new Promise((resolve, reject) => {
      const onLoad = () => {
        this.frame.removeEventListener("load", onLoad);
        const doc = this.frame.contentDocument;
        if (!doc || !doc.body) reject(new Error("the section did not load"));
        else resolve(doc);
      };
      this.frame.addEventListener("load", onLoad);
      this.frame.src = url;
    });
  }

  async render({ locate = false, fragment = null } = {}) {
    const id = ++this.renderId;
    const { doc } = this.target;
    const unit = this.unit;
    this.root.dataset.readerState = "loading";
    this.error.hidden = true;
    try {
      const section = await getJson(`/api/epub/sections/${encodeURIComponent(doc)}/${unit}`);
      if (id !== this.renderId) return;
      this.section = section;
      const where = section.label || section.href || `section ${unit + 1}`;
      this.title.textContent = `${section.title}: ${where}`;
      this.sectionInfo.textContent = `Section ${unit + 1} of ${section.unit_count}`;
      this.prevButton.disabled = section.prev === null;
      this.nextButton.disabled = section.next === null;
      const cited = unit === this.target.unit;
      const spans = cited
        ? await Promise.all([this.fetchSpan(this.target.strong, unit), this.fetchSpan(this.target.light, unit)])
        : [null, null];
      const frameDoc = await this.loadFrame(section.html_url);
      if (id !== this.renderId) return;
      this.wireFrame(frameDoc);
      this.missing = 0;
      this.ranges = {
        light: this.highlight(frameDoc, "tb-light", spans[1]),
        strong: this.highlight(frameDoc, "tb-strong", spans[0]),
      };
      const missing = this.missing;
      this.root.dataset.unit = String(unit);
      this.root.dataset.doc = doc;
      this.root.dataset.highlighted = String(this.ranges.strong.length);
      if (spans[0] && !this.ranges.strong.length && spans[0].segments.length) {
        this.showError("The cited passage could not be placed in this section.");
      }
      this.root.dataset.missing = String(missing);
      if (missing) this.showError(`${missing} pieces of the passage could not be placed.`);
      const first = this.ranges.strong[0] ?? this.ranges.light[0];
      if (fragment) frameDoc.getElementById(fragment)?.scrollIntoView({ block: "start" });
      else if (first && (locate || cited)) this.scrollTo(first);
      else this.frame.contentWindow.scrollTo(0, 0);
      this.root.dataset.readerState = "ready";
      if (this.onNavigate) this.onNavigate(section, this.target);
    } catch (error) {
      if (id !== this.renderId) return;
      this.showError(error.message ?? String(error));
      this.root.dataset.readerState = "error";
    }
  }

  async fetchSpan(span, unit) {
    if (!span) return null;
    const params = new URLSearchParams({
      doc: this.target.doc, unit: String(unit), start: String(span.start), end: String(span.end),
    });
    return getJson(`/api/epub/spans?${params}`);
  }

  // Links to other sections of the book open here, in place (the served XHTML marks them).
  wireFrame(frameDoc) {
    frameDoc.addEventListener("click", (event) => {
      const link = event.target.closest?.("a[data-unit]");
      if (!link) return;
      event.preventDefault();
      this.goTo(Number(link.dataset.unit), { fragment: link.dataset.fragment ?? null });
    });
    frameDoc.addEventListener("keydown", (event) => this.onKey(event));
  }

  // DOM ranges for a span's segments, registered as highlight `name`.
  highlight(frameDoc, name, span) {
    const win = frameDoc.defaultView;
    win.CSS?.highlights?.delete(name);
    if (!span) return [];
    const ranges = [];
    for (const segment of span.segments) {
      const node = resolvePath(frameDoc.body, segment.path);
      if (!node) {
        this.missing++;
        continue;
      }
      const range = frameDoc.createRange();
      range.setStart(node, utf16Offset(node.data, segment.start));
      range.setEnd(node, utf16Offset(node.data, segment.end));
      ranges.push(range);
    }
    if (win.CSS?.highlights && win.Highlight) {
      const highlight = new win.Highlight(...ranges);
      highlight.priority = name === "tb-strong" ? 1 : 0;
      win.CSS.highlights.set(name, highlight);
      return ranges;
    }
    // No Custom Highlight API: wrap each piece (each inside one text node) in a <mark>, last
    // first, so earlier ranges' offsets stay valid.
    return ranges.reverse().map((range) => {
      const mark = frameDoc.createElement("mark");
      mark.className = name;
      range.surroundContents(mark);
      const marked = frameDoc.createRange();
      marked.selectNodeContents(mark);
      return marked;
    }).reverse();
  }

  scrollTo(range) {
    const win = this.frame.contentWindow;
    const rect = range.getBoundingClientRect();
    win.scrollTo({ top: Math.max(0, win.scrollY + rect.top - win.innerHeight / 3), behavior: "instant" });
  }
}
