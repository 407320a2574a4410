"""EPUB sections for the reader view: the stored sanitized XHTML made safe to show in a browser,
and canonical spans turned into DOM ranges.

Ingest already sanitized each section (no scripts, styles, forms, embedded objects; only
whitelisted elements and attributes; see :mod:`truthbase.extract.epub_html`). What is left that
could make a browser reach another origin is ``<a href="http...">`` (a user-followed link) and
``<img src>`` (a relative path inside the book). Here, before serving:

- remote links lose their ``href`` (kept as ``data-external-href`` so the reader can show it);
- links to other sections of the same book become reader links (``/read?doc=&unit=#id``) and
  carry ``data-unit``/``data-fragment`` so the reader page can follow them in place;
  links to anything else lose their ``href``;
- an image of the book (a raster image its manifest lists) is served from the book itself, same
  origin (:mod:`.epub_files`); any other ``src`` is removed (``alt`` stays). The ``<img>``
  element always stays, because node paths count element children and must keep resolving;
- ``style`` and ``on*`` attributes (none survive ingest) are removed all the same, and so are
  the app's own ``tb-*`` class names (an index made before ingest stripped them may hold some).

The response also carries :data:`SECTION_CSP`, which forbids scripts, frames, plugins and any
load but same-origin stylesheets, so even a section that slipped through would load nothing
remote. Only attributes change, never elements or text, so the stored node paths resolve in the
served document exactly as in the stored one.
"""

from __future__ import annotations

import html as html_lib
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import quote, unquote, urldefrag

from ..extract.epub_html import strip_reserved_classes
from ..extract.epub_map import epub_dom_segments
from ..model import DomMap, NodePath

#: The Content-Security-Policy of a served section: nothing runs, nothing remote loads.
SECTION_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; font-src 'self'; "
    "script-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'self'; "
    "sandbox allow-same-origin allow-top-navigation-by-user-activation"
)
#: The Content-Security-Policy of the reader page itself (its scripts and frames: same origin;
#: no page may frame it).
READER_PAGE_CSP = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
#: The stylesheet every served section links (the highlight colours live there).
SECTION_CSS = "/css/epub.css"

# The serializer of epub_html writes every attribute as name="value" with '"', '<' and '>'
# escaped, and escapes '<' in text, so a tag is exactly this and never occurs inside text.
_TAG = re.compile(r'<([a-zA-Z][a-zA-Z0-9]*)((?:\s+[^\s="<>/]+="[^"]*")*)\s*(/?)>')
_ATTR = re.compile(r'\s+([^\s="<>/]+)="([^"]*)"')
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")


@dataclass(frozen=True, slots=True)
class DomSpanSegment:
    """A piece of a span inside one text node: code-point offsets [start, end) of its data."""

    path: NodePath
    start: int
    end: int


def normalize_href(href: str) -> str:
    """A manifest href as a comparable path (percent-decoded, normalized, no fragment)."""
    return posixpath.normpath(unquote(urldefrag(href)[0])).lstrip("/")


def _escape_attr(value: str) -> str:
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("\n", "&#10;")
        .replace("\t", "&#9;")
    )


def _link(
    value: str, doc_id: str, unit_href: str, units_by_href: Mapping[str, int]
) -> dict[str, str]:
    """The attributes that replace ``href=value`` on an ``<a>``."""
    if value.startswith("#"):
        return {"href": value}
    if _SCHEME.match(value) or value.startswith("//"):
        return {"data-external-href": value}
    target, fragment = urldefrag(value)
    resolved = normalize_href(posixpath.join(posixpath.dirname(normalize_href(unit_href)), target))
    unit = units_by_href.get(resolved)
    if unit is None:
        return {}
    href = f"/read?doc={doc_id}&unit={unit}" + (f"#{quote(fragment)}" if fragment else "")
    attrs = {"href": href, "target": "_top", "data-unit": str(unit)}
    if fragment:
        attrs["data-fragment"] = fragment
    return attrs


def section_document(
    stored_html: str,
    *,
    doc_id: str,
    unit_href: str,
    units_by_href: Mapping[str, int],
    image_url: Callable[[str], str | None] | None = None,
    stylesheet: str = SECTION_CSS,
) -> str:
    """The stored sanitized section as the reader serves it (see the module docstring).

    ``units_by_href`` maps each section's :func:`normalize_href` to its unit index;
    ``image_url`` maps an ``<img src>`` to the same-origin URL serving it, or None to drop it.
    """

    def rewrite(match: re.Match[str]) -> str:
        tag, raw_attrs, slash = match.group(1), match.group(2), match.group(3)
        attrs: dict[str, str] = {}
        for name, raw in _ATTR.findall(raw_attrs):
            lower = name.lower()
            value = html_lib.unescape(raw)
            if lower == "style" or lower.startswith("on") or lower in ("srcset", "background"):
                continue
            if lower == "src":
                remote = _SCHEME.match(value) or value.startswith("//")
                if image_url and tag.lower() == "img" and not remote:
                    url = image_url(value)
                    if url is not None:
                        attrs["src"] = url
                continue
            if lower == "href":
                if tag.lower() == "a":
                    attrs.update(_link(value, doc_id, unit_href, units_by_href))
                continue
            if lower == "class":  # stored before ingest stripped them: strip here too
                value = strip_reserved_classes(value)
                if not value:
                    continue
            attrs[name] = value
        written = "".join(f' {k}="{_escape_attr(v)}"' for k, v in attrs.items())
        return f"<{tag}{written}{slash}>"

    head_end = stored_html.find("</head>")
    if head_end < 0:
        raise ValueError("the stored section has no <head>")
    head = stored_html[:head_end]
    body = _TAG.sub(rewrite, stored_html[head_end:])
    link = f'<link rel="stylesheet" href="{_escape_attr(stylesheet)}"/>'
    # The doctype keeps the browser out of quirks mode; it changes nothing inside <body>.
    return f"<!DOCTYPE html>\n{head}{link}{body}"


def span_segments(unit_map: DomMap, start: int, end: int) -> list[DomSpanSegment]:
    """The text-node pieces that show canonical span [start, end), in document order.

    Offsets are code points (as the canonical text counts); the browser converts them to UTF-16.
    """
    return [DomSpanSegment(path, a, b) for path, a, b in epub_dom_segments(unit_map, start, end)]
