"""EPUB 2 and 3 books to units of canonical text with a text-to-DOM map per unit.

``extract_epub(path)`` reads META-INF/container.xml, the OPF package (metadata, manifest,
spine) and the table of contents (EPUB 3 nav document, else the EPUB 2 NCX). Each spine item
that is an XHTML/HTML content document becomes one :class:`~truthbase.model.Unit`:

- ``href`` is the manifest href exactly as the OPF writes it (what golden sets cite);
- ``label`` is the first TOC entry pointing into it (None when none does);
- ``text`` is the canonical text (see :func:`.epub_html.canonical_text`), ``boxes`` all None;
- ``dom`` holds the sanitized XHTML the reader must render and the run-length map from
  canonical offsets to DOM text positions (see :mod:`.epub_map`).

Order: linear spine items first, in spine order, then the items marked ``linear="no"`` (covers,
navigation pages, pop-up notes), in spine order, with ``dom.linear`` False. Reading-order
features (segments, summaries, "next section") thus see the book as a reader flows through it,
while every content document stays citable.

Bad input raises :class:`ExtractionError` and nothing else: ``not_epub`` (not a zip, no
container), ``corrupt`` (unreadable package or members), ``drm`` (encryption.xml encrypting
content, not just fonts), ``encrypted`` (zip-level passwords), ``zip_bomb`` (size and ratio
limits), ``no_text``. Broken XHTML is parsed leniently and reported in ``report.warnings``.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import re
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urldefrag

from ..model import DomMap, ExtractedDocument, ExtractionReport, TocEntry, Unit
from .epub_html import (
    Element,
    Text,
    canonical_text,
    clean_text,
    find_body,
    parse_lenient,
    sanitize,
    serialize,
)
from .errors import ExtractionError
from .xml_safe import UnsafeXml, parse_xml

#: Bump when canonical text, node paths or sanitized HTML can change: stored offsets depend on it.
EPUB_EXTRACTOR_VERSION = "truthbase-epub/1 (spine units, block breaks, collapsed spaces, NFC)"

MAX_TOTAL_UNCOMPRESSED = 200 * 1024 * 1024  # bytes, all members together (as declared)
MAX_RATIO = 100  # uncompressed / compressed, checked for members over RATIO_MIN_SIZE
RATIO_MIN_SIZE = 1024 * 1024
MAX_MEMBERS = 10_000
MAX_WARNINGS_PER_UNIT = 5

_CONTENT_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/x-dtbook+xml"})
_FONT_OBFUSCATION = frozenset(
    {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
)
_FONT_SUFFIXES = (".otf", ".ttf", ".woff", ".woff2", ".eot")
_ENCODING_DECL = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._\-]+)["']""")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9._\-]+)""", re.I)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


@dataclass(frozen=True, slots=True)
class _Item:
    id: str
    href: str  # as written in the OPF
    path: str  # the zip member name it resolves to
    media_type: str
    properties: frozenset[str]


class _Book:
    """A zip archive read within the size and ratio limits."""

    def __init__(self, zf: zipfile.ZipFile, name: str) -> None:
        self.zf = zf
        self.name = name
        self.members = {info.filename: info for info in zf.infolist()}
        self._check_bomb()

    def _check_bomb(self) -> None:
        infos = list(self.members.values())
        if len(infos) > MAX_MEMBERS:
            raise ExtractionError(
                "zip_bomb", f"{self.name}: {len(infos)} zip members (limit {MAX_MEMBERS})"
            )
        total = sum(info.file_size for info in infos)
        if total > MAX_TOTAL_UNCOMPRESSED:
            raise ExtractionError(
                "zip_bomb",
                f"{self.name}: {total / 2**20:.0f} MiB uncompressed "
                f"(limit {MAX_TOTAL_UNCOMPRESSED // 2**20} MiB); refusing to unpack it",
            )
        for info in infos:
            ratio = info.file_size / max(info.compress_size, 1)
            if info.file_size > RATIO_MIN_SIZE and ratio > MAX_RATIO:
                raise ExtractionError(
                    "zip_bomb",
                    f"{self.name}: member {info.filename!r} expands {ratio:.0f}:1 "
                    f"(limit {MAX_RATIO}:1); refusing to unpack it",
                )

    def has(self, member: str) -> bool:
        return member in self.members

    def read(self, member: str) -> bytes:
        info = self.members.get(member)
        if info is None:
            raise KeyError(member)
        if info.flag_bits & 0x1:
            raise ExtractionError(
                "encrypted", f"{self.name}: zip member {member!r} is password-protected"
            )
        try:
            with self.zf.open(info) as handle:
                data = handle.read(info.file_size + 1)
        except ExtractionError:
            raise
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
            raise ExtractionError(
                "corrupt", f"{self.name}: cannot read {member!r} ({exc})"
            ) from exc
        if len(data) > info.file_size:
            raise ExtractionError(
                "zip_bomb", f"{self.name}: {member!r} is larger than its zip header says"
            )
        return data


def _parse_xml(book: _Book, member: str, what: str) -> ET.Element:
    data = book.read(member)
    try:
        return parse_xml(data)
    except UnsafeXml as exc:
        raise ExtractionError("corrupt", f"{book.name}: {what} {exc}; refused") from exc
    except ET.ParseError as exc:
        raise ExtractionError("corrupt", f"{book.name}: {what} is not valid XML ({exc})") from exc


def _resolve(base_member: str, href: str) -> str:
    """The zip member an href (relative to ``base_member``) names, without its fragment."""
    path = unquote(urldefrag(href)[0])
    return posixpath.normpath(posixpath.join(posixpath.dirname(base_member), path)).lstrip("/")


def _container_opf(book: _Book) -> str:
    if not book.has("META-INF/container.xml"):
        raise ExtractionError(
            "not_epub", f"{book.name} is a zip file but not an EPUB (no META-INF/container.xml)"
        )
    root = _parse_xml(book, "META-INF/container.xml", "META-INF/container.xml")
    for element in root.iter():
        if _local(element.tag) == "rootfile":
            full_path = element.get("full-path", "")
            media = element.get("media-type", "application/oebps-package+xml")
            if full_path and media == "application/oebps-package+xml":
                return full_path.lstrip("/")
    raise ExtractionError("corrupt", f"{book.name}: container.xml names no OPF package")


def _check_drm(book: _Book, content_paths: set[str]) -> None:
    """Refuse books whose encryption.xml encrypts anything but obfuscated fonts."""
    if not book.has("META-INF/encryption.xml"):
        return
    root = _parse_xml(book, "META-INF/encryption.xml", "META-INF/encryption.xml")
    encrypted: list[str] = []
    for data in root.iter():
        if _local(data.tag) != "EncryptedData":
            continue
        method = ""
        uri = ""
        for child in data.iter():
            if _local(child.tag) == "EncryptionMethod":
                method = child.get("Algorithm", "")
            elif _local(child.tag) == "CipherReference":
                uri = unquote(child.get("URI", "")).lstrip("/")
        font = uri.lower().endswith(_FONT_SUFFIXES)
        if method in _FONT_OBFUSCATION and font:
            continue
        if uri in content_paths or not font:
            encrypted.append(uri)
    if encrypted:
        shown = ", ".join(encrypted[:3]) + (" ..." if len(encrypted) > 3 else "")
        raise ExtractionError(
            "drm",
            f"{book.name} is DRM-protected ({len(encrypted)} encrypted members: {shown}); "
            "only DRM-free EPUBs can be ingested",
        )


def _decode(data: bytes) -> tuple[str, bool]:
    """Markup bytes to text: BOM, XML declaration, <meta charset>, else UTF-8."""
    if data.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    else:
        match = _ENCODING_DECL.match(data) or _META_CHARSET.search(data[:2048])
        encoding = match.group(1).decode("ascii") if match else "utf-8"
    try:
        return data.decode(encoding), False
    except (LookupError, UnicodeDecodeError):
        return data.decode("utf-8", errors="replace"), True


def _text_of(element: Element) -> str:
    parts: list[str] = []

    def walk(e: Element) -> None:
        for child in e.children:
            if isinstance(child, Text):
                parts.append(child.data)
            elif child.tag not in ("script", "style"):
                walk(child)

    walk(element)
    return " ".join("".join(parts).split())


def _nav_toc(book: _Book, nav_member: str) -> list[tuple[str, str, int]]:
    """(title, href relative to the nav document, depth) from an EPUB 3 nav document."""
    text, _ = _decode(book.read(nav_member))
    root, _ = parse_lenient(text)
    navs: list[Element] = []
    todo: list[Element] = [root]
    while todo:
        element = todo.pop()
        if element.tag == "nav":
            navs.append(element)
        todo.extend(c for c in reversed(element.children) if isinstance(c, Element))
    chosen = next((n for n in navs if "toc" in n.attrs.get("epub:type", "").split()), None)
    if chosen is None and navs:
        chosen = navs[0]
    if chosen is None:
        return []
    entries: list[tuple[str, str, int]] = []

    def walk(element: Element, depth: int) -> None:
        for child in element.children:
            if not isinstance(child, Element):
                continue
            if child.tag == "li":
                link = next(
                    (
                        c
                        for c in child.children
                        if isinstance(c, Element) and c.tag in ("a", "span")
                    ),
                    None,
                )
                if link is not None and link.attrs.get("href"):
                    entries.append((_text_of(link), link.attrs["href"], depth))
                walk(child, depth + 1)
            else:
                walk(child, depth)

    walk(chosen, 0)
    return entries


def _ncx_toc(book: _Book, ncx_member: str) -> list[tuple[str, str, int]]:
    root = _parse_xml(book, ncx_member, ncx_member)
    entries: list[tuple[str, str, int]] = []

    def walk(element: ET.Element, depth: int) -> None:
        for child in element:
            if _local(child.tag) != "navPoint":
                continue
            title = ""
            src = ""
            for sub in child:
                if _local(sub.tag) == "navLabel":
                    title = " ".join("".join(sub.itertext()).split())
                elif _local(sub.tag) == "content":
                    src = sub.get("src", "")
            if src:
                entries.append((title, src, depth))
            walk(child, depth + 1)

    for element in root.iter():
        if _local(element.tag) == "navMap":
            walk(element, 0)
            break
    return entries


def _metadata(package: ET.Element) -> dict[str, str]:
    found: dict[str, str] = {}
    for element in package.iter():
        if _local(element.tag) == "metadata":
            for child in element:
                name = _local(child.tag)
                value = " ".join("".join(child.itertext()).split())
                if child.tag.startswith("{http://purl.org/dc/elements/1.1/}") and value:
                    found.setdefault(name, value)
            break
    return found


def extract_epub(path: Path | str, *, name: str | None = None) -> ExtractedDocument:
    """Extract an EPUB 2 or 3 book (see the module docstring); a book without a title is
    called by ``name``'s stem (the file's name as its owner knows it), else ``path``'s."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ExtractionError(
            "corrupt", f"{path.name}: cannot read ({exc})", path=str(path)
        ) from exc
    try:
        return _extract(path, data, Path(name or path.name).stem)
    except ExtractionError as exc:
        exc.path = str(path)
        raise
    except Exception as exc:  # lenient parsing should not fail; never leak anything else
        raise ExtractionError(
            "corrupt", f"{path.name}: unreadable EPUB ({type(exc).__name__}: {exc})", path=str(path)
        ) from exc


def _extract(path: Path, data: bytes, stem: str) -> ExtractedDocument:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ExtractionError("not_epub", f"{path.name} is not an EPUB (not a zip file)") from exc
    report = ExtractionReport()
    with zf:
        book = _Book(zf, path.name)
        if book.has("mimetype"):
            if book.read("mimetype").strip() != b"application/epub+zip":
                report.warnings.append("mimetype member is not application/epub+zip")
        else:
            report.warnings.append("no mimetype member")
        opf = _container_opf(book)
        if not book.has(opf):
            raise ExtractionError("corrupt", f"{path.name}: OPF package {opf!r} is missing")
        package = _parse_xml(book, opf, opf)

        manifest: dict[str, _Item] = {}
        spine: list[tuple[str, bool]] = []
        spine_toc = ""
        for element in package.iter():
            name = _local(element.tag)
            if name == "item" and element.get("id") and element.get("href"):
                href = element.get("href", "")
                manifest[element.get("id", "")] = _Item(
                    id=element.get("id", ""),
                    href=href,
                    path=_resolve(opf, href),
                    media_type=element.get("media-type", ""),
                    properties=frozenset(element.get("properties", "").split()),
                )
            elif name == "spine":
                spine_toc = element.get("toc", "")
            elif name == "itemref" and element.get("idref"):
                spine.append((element.get("idref", ""), element.get("linear", "yes") != "no"))
        if not spine:
            raise ExtractionError("corrupt", f"{path.name}: the OPF spine is empty")

        content_paths = {item.path for item in manifest.values()}
        _check_drm(book, content_paths)

        metadata = _metadata(package)
        title = metadata.get("title") or stem
        lang = metadata.get("language")

        ordered = [s for s in spine if s[1]] + [s for s in spine if not s[1]]
        if len(ordered) != sum(1 for s in spine if s[1]):
            report.warnings.append(
                f"{sum(1 for s in spine if not s[1])} non-linear spine items placed after the "
                "linear ones"
            )
        units: list[Unit] = []
        by_path: dict[str, int] = {}
        for idref, linear in ordered:
            item = manifest.get(idref)
            if item is None:
                report.warnings.append(f"spine idref {idref!r} is not in the manifest; skipped")
                continue
            if item.media_type not in _CONTENT_TYPES and not item.href.endswith(
                (".xhtml", ".html", ".htm")
            ):
                report.warnings.append(f"spine item {item.href!r} ({item.media_type}) skipped")
                continue
            if item.path in by_path:
                report.warnings.append(f"spine item {item.href!r} listed twice; kept once")
                continue
            member = item.path if book.has(item.path) else unquote(item.href)
            if not book.has(member):
                report.warnings.append(f"spine item {item.href!r} is missing from the zip")
                continue
            unit = _unit(book, member, item.href, len(units), linear, title, lang, report)
            by_path[item.path] = unit.index
            units.append(unit)

        if not units or all(not u.text.strip() for u in units):
            raise ExtractionError("no_text", f"{path.name}: no spine item has any text")

        toc = _toc(book, manifest, spine_toc, units, by_path, report)
        for entry in toc:
            unit = units[entry.unit]
            if unit.label is None:
                unit.label = entry.title
    if "creator" in metadata:
        metadata.setdefault("author", metadata["creator"])
    return ExtractedDocument(
        sha256=hashlib.sha256(data).hexdigest(),
        title=title,
        path=str(path),
        kind="epub",
        units=units,
        extractor_version=EPUB_EXTRACTOR_VERSION,
        report=report,
        toc=toc,
        metadata=metadata,
    )


def _unit(
    book: _Book,
    member: str,
    href: str,
    index: int,
    linear: bool,
    title: str,
    lang: str | None,
    report: ExtractionReport,
) -> Unit:
    markup, replaced = _decode(book.read(member))
    warnings: list[str] = []
    if replaced:
        warnings.append("undecodable bytes replaced with U+FFFD")
    root, parse_warnings = parse_lenient(clean_text(markup))
    warnings.extend(parse_warnings)
    body = sanitize(find_body(root), warnings)
    section = canonical_text(body)
    if warnings:
        shown = warnings[:MAX_WARNINGS_PER_UNIT]
        more = len(warnings) - len(shown)
        report.warnings.append(
            f"{href}: broken XHTML parsed leniently: {'; '.join(shown)}"
            + (f" (+{more} more)" if more else "")
        )
    if not section.text.strip():
        report.empty_units += 1
    dom = DomMap(
        html=serialize(body, title, lang),
        nodes=section.nodes,
        runs=section.runs,
        anchors=section.anchors,
        linear=linear,
    )
    return Unit(
        index=index,
        text=section.text,
        boxes=[None] * len(section.text),
        href=href,
        dom=dom,
        text_source="epub",
    )


def _toc(
    book: _Book,
    manifest: dict[str, _Item],
    spine_toc: str,
    units: list[Unit],
    by_path: dict[str, int],
    report: ExtractionReport,
) -> list[TocEntry]:
    raw: list[tuple[str, str, int]] = []
    base = ""
    nav = next((i for i in manifest.values() if "nav" in i.properties), None)
    ncx = manifest.get(spine_toc) or next(
        (i for i in manifest.values() if i.media_type == "application/x-dtbncx+xml"), None
    )
    for candidate, reader in ((nav, _nav_toc), (ncx, _ncx_toc)):
        if candidate is None or not book.has(candidate.path):
            continue
        try:
            raw = reader(book, candidate.path)
        except ExtractionError as exc:
            report.warnings.append(f"table of contents {candidate.href!r} unreadable: {exc}")
            continue
        if raw:
            base = candidate.path
            break
    entries: list[TocEntry] = []
    for title, href, depth in raw:
        target = _resolve(base, href)
        unit_index = by_path.get(target)
        if unit_index is None:
            continue
        fragment = unquote(urldefrag(href)[1])
        dom = units[unit_index].dom
        offset = dom.anchors.get(fragment, 0) if dom is not None and fragment else 0
        entries.append(
            TocEntry(title=title, unit=unit_index, offset=offset, depth=depth, href=href)
        )
    if raw and not entries:
        report.warnings.append("no table-of-contents entry points to a spine item")
    return entries
