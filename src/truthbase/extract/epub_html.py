"""One EPUB content document (XHTML) to sanitized XHTML, canonical text and a text-to-DOM map.

Steps, each pure:

1. ``parse_lenient``: bytes to a small element tree with :mod:`html.parser` (never raises on
   broken markup; mismatched tags are repaired the obvious way and reported as warnings).
2. ``sanitize``: the ``<body>`` subtree rewritten into XHTML that an XML parser *and* an HTML
   parser turn into the same DOM: no scripts, styles, forms, embedded objects, SVG/MathML or
   remote resources; only whitelisted elements and attributes; ``<tbody>`` inserted the way an
   HTML parser would; a ``<p>`` that holds block content renamed to ``<div>`` (an HTML parser
   would close the ``<p>``); nested ``<a>``/headings/list items renamed; a leading newline of
   ``<pre>`` dropped (an HTML parser drops it); adjacent text merged (browsers hold one text
   node where comments or dropped elements separated two). ``serialize`` writes it out.
3. ``canonical_text``: the text a reader sees, with one map entry per character.

The text-to-DOM scheme (``truthbase.model.NodePath``) is defined against the sanitized output,
so the reader must render ``DomMap.html`` itself, not the original file.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from html.parser import HTMLParser

from ..model import DomRun, NodePath


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Elements dropped with everything inside them.
_DROP = _names(
    """head title meta link base script style template noscript iframe frame frameset object
    embed applet param svg math canvas audio video source track input select option optgroup
    textarea datalist output progress meter map area noembed noframes"""
)
# Elements kept as they are.
_ALLOWED = _names(
    """a abbr address article aside b bdi bdo big blockquote br caption cite code col colgroup
    dd del details dfn div dl dt em figcaption figure footer h1 h2 h3 h4 h5 h6 header hgroup hr
    i img ins kbd li main mark nav ol p pre q rp rt ruby s samp section small span strong sub
    summary sup table tbody td tfoot th thead time tr tt u ul var wbr"""
)
_RENAME = {
    "center": "div",
    "listing": "pre",
    "xmp": "pre",
    "plaintext": "pre",
    "form": "div",
    "dialog": "div",
    "fieldset": "div",
    "legend": "div",
}
_VOID = _names("area base br col embed hr img input link meta param source track wbr")
# Block-level elements: a line break before and after their content in the canonical text.
_BLOCK = _names(
    """address article aside blockquote body caption dd details dialog div dl dt figcaption
    figure footer h1 h2 h3 h4 h5 h6 header hgroup hr li main nav ol p pre section summary table
    tbody thead tfoot tr ul"""
)
# Start tags that make an HTML parser close an open <p> (WHATWG "in body" insertion mode).
_CLOSES_P = _names(
    """address article aside blockquote center details dialog dir div dl fieldset figcaption
    figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr main menu nav ol p pre section summary
    table ul li dd dt listing xmp plaintext"""
)
_HEADINGS = _names("h1 h2 h3 h4 h5 h6")
_TABLE_SECTIONS = _names("thead tbody tfoot")
_ATTRS = _names("id class lang dir title href src alt colspan rowspan start type")
# HTML's ASCII whitespace: what browsers collapse (U+00A0 and other spaces stay).
_WS = " \t\n\r\f"
_MAX_DEPTH = 200
_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")


@dataclass(slots=True)
class Element:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Element | Text] = field(default_factory=list)


@dataclass(slots=True)
class Text:
    data: str


def clean_text(data: str) -> str:
    """Line ends as parsers normalize them; characters XML cannot carry removed."""
    data = data.replace("\r\n", "\n").replace("\r", "\n")
    return _BAD_CHARS.sub("", data)


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root")
        self.stack: list[Element] = [self.root]
        self.warnings: list[str] = []
        self.too_deep = 0

    def _append_text(self, data: str) -> None:
        data = clean_text(data)
        if not data:
            return
        children = self.stack[-1].children
        if children and isinstance(children[-1], Text):
            children[-1].data += data
        else:
            children.append(Text(data))

    def _element(self, tag: str, attrs: list[tuple[str, str | None]]) -> Element:
        return Element(tag, {k: clean_text(v or "") for k, v in attrs})

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = self._element(tag, attrs)
        if len(self.stack) > _MAX_DEPTH:
            self.too_deep += 1
            return
        self.stack[-1].children.append(element)
        if tag not in _VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if len(self.stack) > _MAX_DEPTH:
            self.too_deep += 1
            return
        self.stack[-1].children.append(self._element(tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                unclosed = [e.tag for e in self.stack[depth + 1 :]]
                if unclosed:
                    self.warnings.append(f"<{'>, <'.join(unclosed)}> closed by </{tag}>")
                del self.stack[depth:]
                return
        if tag not in _VOID:
            if self.too_deep:
                return
            self.warnings.append(f"stray </{tag}> ignored")

    def handle_data(self, data: str) -> None:
        self._append_text(data)

    def unknown_decl(self, data: str) -> None:
        if data.startswith("CDATA["):
            self._append_text(data[6:])

    def finish(self) -> Element:
        self.close()
        unclosed = [e.tag for e in self.stack[1:] if e.tag not in ("html", "body")]
        if unclosed:
            self.warnings.append(f"<{'>, <'.join(unclosed)}> never closed")
        if self.too_deep:
            self.warnings.append(
                f"{self.too_deep} elements nested deeper than {_MAX_DEPTH} levels flattened"
            )
        return self.root


def parse_lenient(markup: str) -> tuple[Element, list[str]]:
    """Parse (X)HTML without ever failing; return the tree and what had to be repaired."""
    builder = _TreeBuilder()
    builder.feed(markup)
    root = builder.finish()
    return root, builder.warnings


def find_body(root: Element) -> Element:
    """The <body> element, or a synthesized one holding everything outside <head>."""
    todo: list[Element] = [root]
    while todo:
        element = todo.pop()
        if element.tag == "body":
            return element
        todo.extend(c for c in reversed(element.children) if isinstance(c, Element))
    body = Element("body")
    for child in root.children:
        if isinstance(child, Element) and child.tag == "html":
            body.children.extend(child.children)
        else:
            body.children.append(child)
    return body


#: The class names the app's own pages and stylesheets use (``tb-strong``, ``tb-light``, ...):
#: a book that wrote them could paint a fake "cited" highlight, so they never survive.
_RESERVED_CLASS = re.compile(r"^tb-", re.IGNORECASE)


def strip_reserved_classes(value: str) -> str:
    """A ``class`` attribute's value without the app's reserved (``tb-*``) class names."""
    return " ".join(c for c in value.split() if not _RESERVED_CLASS.match(c))


def _safe_attrs(tag: str, attrs: dict[str, str]) -> dict[str, str]:
    kept: dict[str, str] = {}
    for name, value in attrs.items():
        if name == "xml:lang":
            name = "lang"
        if name not in _ATTRS:
            continue
        # src: only images inside the book: no scheme (http:, data:, ...) and no //host.
        if name == "src" and (tag != "img" or _SCHEME.match(value) or value.startswith("//")):
            continue
        if name == "href":
            scheme = _SCHEME.match(value)
            if tag != "a" or (scheme and scheme.group(0).lower() not in ("http:", "https:")):
                continue
        if name == "class":
            value = strip_reserved_classes(value)
            if not value:
                continue
        kept[name] = value
    return kept


@dataclass(slots=True)
class _Ctx:
    in_a: bool = False
    in_item: bool = False  # inside li/dd/dt with no list element in between
    parent: str = "body"


def _sanitize_children(
    children: list[Element | Text], ctx: _Ctx, warnings: list[str]
) -> tuple[list[Element | Text], bool]:
    """Sanitized children and whether any of them (deeply) would close an open <p>."""
    out: list[Element | Text] = []
    closes_p = False
    table_part = ctx.parent in ("table", "tr", "colgroup") or ctx.parent in _TABLE_SECTIONS
    for child in children:
        if isinstance(child, Text):
            if table_part:
                if child.data.strip(_WS):
                    warnings.append(f"text directly inside <{ctx.parent}> dropped")
                continue
            if out and isinstance(out[-1], Text):
                out[-1].data += child.data
            elif child.data:
                out.append(Text(child.data))
            continue
        element = _sanitize_element(child, ctx, warnings)
        if element is None:
            continue
        if isinstance(element, list):  # an element unwrapped into its children
            for item in element:
                if isinstance(item, Text) and out and isinstance(out[-1], Text):
                    out[-1].data += item.data
                else:
                    out.append(item)
            closes_p = closes_p or any(_closes_p(e) for e in element if isinstance(e, Element))
            continue
        closes_p = closes_p or _closes_p(element)
        out.append(element)
    return out, closes_p


def _closes_p(element: Element) -> bool:
    if element.tag in _CLOSES_P:
        return True
    return any(_closes_p(c) for c in element.children if isinstance(c, Element))


def _sanitize_element(
    element: Element, ctx: _Ctx, warnings: list[str]
) -> Element | list[Element | Text] | None:
    tag = element.tag.lower()
    if tag in _DROP or tag.startswith("?"):
        return None
    tag = _RENAME.get(tag, tag)
    if tag in ("html", "body"):  # a stray nested html/body: keep its content only
        children, _ = _sanitize_children(element.children, ctx, warnings)
        return children
    if tag not in _ALLOWED:
        tag = "span"
    if tag == "a" and ctx.in_a:
        tag = "span"
    if tag in _HEADINGS and ctx.parent in _HEADINGS:
        tag = "span"
    if tag in ("li", "dd", "dt") and ctx.in_item:
        tag = "div"
    attrs = _safe_attrs(tag, element.attrs)
    if tag in _VOID:
        return Element(tag, attrs)
    child_ctx = _Ctx(
        in_a=ctx.in_a or tag == "a",
        in_item=(ctx.in_item or tag in ("li", "dd", "dt")) and tag not in ("ul", "ol", "dl"),
        parent=tag,
    )
    children, closes_p = _sanitize_children(element.children, child_ctx, warnings)
    if tag == "p" and closes_p:
        tag = "div"
    out = Element(tag, attrs, children)
    if tag == "pre" and children and isinstance(children[0], Text):
        first = children[0]
        if first.data.startswith("\n"):
            first.data = first.data[1:]
            if not first.data:
                del children[0]
    if tag == "table":
        out.children = _table_rows(children)
    elif tag in _TABLE_SECTIONS:
        out.children = _wrap_rows(children)
    elif tag == "tr":
        out.children = _wrap_cells(children)
    return out


def _wrap_cells(children: list[Element | Text]) -> list[Element | Text]:
    out: list[Element | Text] = []
    for child in children:
        if isinstance(child, Element) and child.tag in ("td", "th"):
            out.append(child)
        else:
            out.append(Element("td", {}, [child]))
    return out


def _wrap_rows(children: list[Element | Text]) -> list[Element | Text]:
    out: list[Element | Text] = []
    implied: Element | None = None  # the row we made for loose cells, while it can grow
    for child in children:
        if isinstance(child, Element) and child.tag == "tr":
            out.append(child)
            implied = None
        elif isinstance(child, Element) and child.tag in ("td", "th"):
            if implied is None:
                implied = Element("tr")
                out.append(implied)
            implied.children.append(child)
        else:
            out.append(Element("tr", {}, [Element("td", {}, [child])]))
            implied = None
    return out


def _table_rows(children: list[Element | Text]) -> list[Element | Text]:
    """Table children as an HTML parser builds them: rows and cells always inside a section."""
    out: list[Element | Text] = []
    loose: list[Element | Text] = []

    def flush() -> None:
        if loose:
            out.append(Element("tbody", {}, _wrap_rows(list(loose))))
            loose.clear()

    for child in children:
        if isinstance(child, Element) and child.tag in ("caption", "colgroup", *_TABLE_SECTIONS):
            flush()
            out.append(child)
        elif isinstance(child, Element) and child.tag == "col":
            flush()
            out.append(Element("colgroup", {}, [child]))
        else:
            loose.append(child)
    flush()
    return out


def sanitize(body: Element, warnings: list[str]) -> Element:
    """The sanitized <body> (see the module docstring for what changes and why)."""
    children, _ = _sanitize_children(body.children, _Ctx(), warnings)
    return Element("body", _safe_attrs("body", body.attrs), children)


def _escape_text(data: str) -> str:
    return data.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_attr(data: str) -> str:
    return _escape_text(data).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")


def serialize(body: Element, title: str, lang: str | None = None) -> str:
    """A polyglot XHTML document: an XML and an HTML parser build the same <body> subtree."""
    parts: list[str] = ['<html xmlns="http://www.w3.org/1999/xhtml"']
    if lang:
        parts.append(f' lang="{_escape_attr(lang)}"')
    parts.append(f'><head><meta charset="utf-8"/><title>{_escape_text(title)}</title></head>')

    def walk(element: Element) -> None:
        parts.append(f"<{element.tag}")
        for name, value in element.attrs.items():
            parts.append(f' {name}="{_escape_attr(value)}"')
        if element.tag in _VOID:
            parts.append("/>")
            return
        parts.append(">")
        for child in element.children:
            if isinstance(child, Text):
                parts.append(_escape_text(child.data))
            else:
                walk(child)
        parts.append(f"</{element.tag}>")

    walk(body)
    parts.append("</html>")
    return "".join(parts)


@dataclass(slots=True)
class CanonicalSection:
    text: str
    nodes: list[NodePath]
    runs: list[DomRun]
    anchors: dict[str, int]


class _Builder:
    """Canonical text with, per character, its (node id, offset) or None when synthesized."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.src: list[tuple[int, int] | None] = []
        self.pending_space: tuple[int, int] | None = None
        self.pending_break = False
        self.pending_sep = False
        self.pending_anchors: list[str] = []
        self.anchors: dict[str, int] = {}

    def _at_line_start(self) -> bool:
        return not self.chars or self.chars[-1] == "\n"

    def block(self) -> None:
        self.pending_break = True
        self.pending_space = None
        self.pending_sep = False

    def cell(self) -> None:
        self.pending_sep = True

    def anchor(self, name: str) -> None:
        self.pending_anchors.append(name)

    def _flush(self) -> None:
        if self.pending_break:
            if not self._at_line_start():
                self.chars.append("\n")
                self.src.append(None)
        elif self.pending_space is not None and not self._at_line_start():
            self.chars.append(" ")
            self.src.append(self.pending_space)
        elif self.pending_sep and not self._at_line_start():
            self.chars.append(" ")
            self.src.append(None)
        self.pending_break = False
        self.pending_space = None
        self.pending_sep = False
        for name in self.pending_anchors:
            self.anchors.setdefault(name, len(self.chars))
        self.pending_anchors.clear()

    def text(self, node: int, data: str, pre: bool) -> None:
        for offset, ch in enumerate(data):
            if ch == "\u00ad":  # soft hyphen: removed from canonical text (DESIGN.md)
                continue
            if pre:
                self._flush()
                self.chars.append(ch)
                self.src.append((node, offset))
                continue
            if ch in _WS:
                if self.pending_space is None and not self._at_line_start():
                    self.pending_space = (node, offset)
                continue
            self._flush()
            self.chars.append(ch)
            self.src.append((node, offset))

    def finish(self) -> tuple[str, list[tuple[int, int] | None], dict[str, int]]:
        for name in self.pending_anchors:
            self.anchors.setdefault(name, len(self.chars))
        chars, src = self.chars, self.src
        while chars and chars[-1] in "\n ":  # a trailing synthesized break or separator
            if src[-1] is not None and chars[-1] != "\n":
                break
            chars.pop()
            src.pop()
        end = len(chars)
        anchors = {k: min(v, end) for k, v in self.anchors.items()}
        return "".join(chars), src, anchors


def _nfc(text: str, src: list[tuple[int, int] | None]) -> tuple[str, list[tuple[int, int] | None]]:
    """NFC per cluster (a base and its combining marks); a changed cluster maps to its start."""
    if unicodedata.is_normalized("NFC", text):
        return text, src
    out: list[str] = []
    out_src: list[tuple[int, int] | None] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        cluster = text[i:j]
        composed = unicodedata.normalize("NFC", cluster)
        if composed == cluster:
            out.extend(cluster)
            out_src.extend(src[i:j])
        else:
            first = next((s for s in src[i:j] if s is not None), None)
            for k, ch in enumerate(composed):
                out.append(ch)
                out_src.append(first if k == 0 else None)
        i = j
    return "".join(out), out_src


def canonical_text(body: Element) -> CanonicalSection:
    """The canonical text of a sanitized <body>, with its text-to-DOM runs and anchor offsets.

    Rules (a browser's rendering without CSS, one line break per block boundary):
    block elements and <br> end the current line (never an empty line, none at the ends); runs
    of ASCII whitespace collapse to one space, dropped at line starts and ends, except inside
    <pre> where every character is kept; table cells are separated by one space; U+00AD is
    removed; images contribute nothing; NFC at the end.
    """
    builder = _Builder()
    nodes: list[NodePath] = []

    def walk(element: Element, path: tuple[int, ...], pre: bool) -> None:
        element_index = 0
        text_index = 0
        block = element.tag in _BLOCK
        if block:
            builder.block()
        if element.tag in ("td", "th"):
            builder.cell()
        if "id" in element.attrs:
            builder.anchor(element.attrs["id"])
        for child in element.children:
            if isinstance(child, Text):
                node_id = len(nodes)
                nodes.append((*path, text_index))
                text_index += 1
                builder.text(node_id, child.data, pre)
            else:
                child_path = (*path, element_index)
                element_index += 1
                if child.tag in ("br", "hr"):
                    builder.block()
                    if "id" in child.attrs:
                        builder.anchor(child.attrs["id"])
                    continue
                walk(child, child_path, pre or child.tag == "pre")
        if block:
            builder.block()
        if element.tag in ("td", "th"):
            builder.cell()

    walk(body, (), False)
    text, src, anchors = builder.finish()
    text, src = _nfc(text, src)
    return CanonicalSection(text=text, nodes=nodes, runs=_runs(src), anchors=anchors)


def _runs(src: list[tuple[int, int] | None]) -> list[DomRun]:
    runs: list[DomRun] = []
    start = 0
    current: tuple[int, int] | None = None  # (node, offset) of the run's first character
    for i, pos in enumerate([*src, None]):
        if current is not None:
            expected = (current[0], current[1] + (i - start))
            if pos == expected:
                continue
            runs.append(DomRun(start, i, current[0], current[1]))
        current = pos
        start = i
    return runs


def text_nodes(body: Element) -> dict[NodePath, str]:
    """Every text node of a sanitized <body> by its NodePath (for tests and the reader)."""
    found: dict[NodePath, str] = {}

    def walk(element: Element, path: tuple[int, ...]) -> None:
        element_index = 0
        text_index = 0
        for child in element.children:
            if isinstance(child, Text):
                found[(*path, text_index)] = child.data
                text_index += 1
            else:
                walk(child, (*path, element_index))
                element_index += 1

    walk(body, ())
    return found
