"""PDF extraction with pdfium: the thin I/O shell around the pure text core.

Reads pdfium's character array page by page (code point, generated/hyphen flags, loose box, and
the font name for private-use glyphs), then hands everything to pure functions: line-break
cleanup (``text``), document-wide private-use ligature inference (``ligatures``), document-wide
line-end hyphen decisions, word break or compound hyphen (``hyphens``), and the canonical text
with its boxes (``text``).

Pages without a usable text layer (no letter or digit: scans, fonts without a Unicode mapping)
are rendered and read by the OCR engine (``tesseract``) when OCR is on; its words become the
page's text and glyph boxes (``ocr``), going through the same hyphen decisions and NFC as text
pages. Pages with a text layer are never OCR'd.

Reading order is pdfium's character order. On the multi-column corpus files (two-column ACM and
NAACL papers, the three-column Federal Register) it is column by column, not line by line across
columns, so no reordering is done here; tests/integration/test_extract_pdf.py proves it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ..config import OcrSettings
from ..model import (
    ExtractedDocument,
    ExtractionReport,
    OcrInfo,
    PageGeometry,
    Rect,
    TocEntry,
    Unit,
    packed_boxes,
)
from ..telemetry import span
from ..text.figures import figure_blocks
from .charread import handle, raw_calls, read_page
from .errors import ExtractionError
from .hyphens import decide_line_end_hyphens
from .ligatures import PuaRepair, Template, infer_from_words, pua_key_label
from .ocr import RenderFrame, has_usable_text, large_print_factor, ocr_page_text, render_scale
from .pagechars import (
    EMPTY,
    PageChars,
    clean_page,
    expand_page_chars,
    has_private_use,
    pua_keys,
    pua_words,
)
from .pathrules import could_grid, read_rules
from .tables import PageTable, Rule, assemble_tables, find_grids, link_headers
from .tesseract import HOW_TO_ENABLE, OcrEngine, OcrUnavailable, TesseractEngine
from .text import PageText, finish_page
from .title import document_title

#: Bump when the canonical text or boxes of any file can change: stored offsets depend on it.
#: 3: pages without a usable text layer are OCR'd (text pages are unchanged); 4: ruled tables
#: kept as rows; 5: symbols of TeX's math-symbol fonts that pdfium read as letters and digits
#: are the symbols (``charread.tex_symbols``: "⟨wd⟩" for "hwdi"); 6: a spacing accent drawn on
#: a letter is that letter's accent (``text._stacked_accents``: "Schröder" for "Schr¨oder"), and
#: TeX's \not and \mapsto are ≠ and ↦ (not "6=" and "7→").
EXTRACTOR_VERSION = (
    "truthbase-pdf/6 (pdfium char order, loose boxes, NFC, ligatures joined, TeX math symbols, "
    "accents drawn on letters joined, TeX's not and mapsto, "
    "line-end compound hyphens kept, OCR of pages without a usable text layer, ruled tables "
    "as rows)"
)

#: Called after each OCR'd page with (pages done, pages to OCR) of the document.
OcrProgress = Callable[[int, int], None]

#: What a page's place in a finished stage's list holds once the next stage has it.
_DONE = PageText("", [])

# pdfium accepts a header anywhere in the first 1024 bytes (PDF 1.7, Annex H implementation note).
_HEADER_WINDOW = 1024


@dataclass(frozen=True, slots=True)
class _RawPage:
    chars: PageChars
    geometry: PageGeometry | None
    label: str | None
    unmapped: int  # characters pdfium flags with a Unicode mapping error
    error: str | None = None
    rules: list[Rule] = field(default_factory=list)  # straight path segments (table rules)
    text_rotation: int = 0  # how most glyphs are turned (counter-clockwise degrees, by 90)


def _rect(box: Sequence[float]) -> Rect:
    x0, y0, x1, y1 = (float(v) for v in box)
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


# The rules of tables (``pathrules``); the old name is what benchmarks/tables_study.py calls.
_read_rules = read_rules


_ANGLE_SAMPLE = 400  # glyphs whose angle decides which way the page's text reads


def _text_rotation(textpage: pdfium.PdfTextPage, chars: PageChars) -> int:
    """The direction most glyphs are drawn in, counter-clockwise degrees rounded to 90.

    Tables are read in the frame where the text stands upright, which is not always the one the
    page's /Rotate gives (a landscape table in a portrait page shown sideways).
    """
    votes = [0, 0, 0, 0]
    seen = 0
    char_angle = raw_calls().char_angle
    page = handle(textpage)
    text = chars.text
    for i, box in enumerate(chars.boxes):
        if seen >= _ANGLE_SAMPLE:
            break
        # A generated character has no box (read_page).
        if box is None or text[i].isspace():
            continue
        angle = float(char_angle(page, i))
        if angle < 0:
            continue
        k = round(math.degrees(angle) / 90.0) % 4
        votes[k] += 1
        seen += 1
        if 2 * votes[k] > _ANGLE_SAMPLE:
            break  # a majority of the whole sample: no other direction can catch up
    return 90 * max(range(4), key=lambda k: votes[k])


def _read_page(document: pdfium.PdfDocument, index: int) -> _RawPage:
    label = document.get_page_label(index) or None
    try:
        page = document[index]
    except pdfium.PdfiumError as exc:
        return _RawPage(EMPTY, None, label, 0, error=f"page {index + 1}: cannot load ({exc})")
    try:
        geometry = PageGeometry(
            mediabox=_rect(page.get_mediabox()),
            cropbox=_rect(page.get_cropbox()),
            rotation=int(page.get_rotation()) % 360,
        )
        textpage = page.get_textpage()
        try:
            chars, unmapped = read_page(textpage)
            rules = _read_rules(page) if chars.text else []
            # No grid without rules both ways (``find_grids``): then the direction is not needed.
            upright = _text_rotation(textpage, chars) if could_grid(rules) else 0
        finally:
            textpage.close()
    finally:
        page.close()
    return _RawPage(_packed(chars), geometry, label, unmapped, rules=rules, text_rotation=upright)


def _packed(chars: PageChars) -> PageChars:
    """The page with its boxes packed (:class:`~truthbase.model.BoxColumn`): every page of a
    document is held until the document-wide decisions are made, and a list of box tuples
    costs ~200 bytes a character (the 1,370-page lwarp manual held ~600 MB of them)."""
    boxes = packed_boxes(chars.boxes)
    return chars if boxes is chars.boxes else replace(chars, boxes=boxes)


@dataclass(frozen=True, slots=True)
class _OcrResult:
    page: PageText  # hyphen marks not decided yet, like ``expand_page``'s output
    info: OcrInfo


def _ocr_page(
    document: pdfium.PdfDocument, index: int, engine: OcrEngine, settings: OcrSettings
) -> _OcrResult:
    """Render page ``index`` (turned upright when the engine finds its text sideways) and read
    it; boxes in the page's user space."""
    page = document[index]
    try:
        width, height = page.get_size()
        scale = render_scale(width, height, settings.dpi, settings.max_megapixels)
        image = page.render(scale=scale, grayscale=True).to_pil()
        turn = engine.orientation(image) if settings.detect_orientation else 0
        if turn:
            image = page.render(scale=scale, rotation=turn, grayscale=True).to_pil()
        frame = RenderFrame(
            cropbox=_rect(page.get_cropbox()),
            rotation=(int(page.get_rotation()) + turn) % 360,
            width=image.width,
            height=image.height,
        )
        read = engine.read(image)
        text = ocr_page_text(read, frame)
        factor = large_print_factor(read)
        if factor is not None:
            smaller = page.render(scale=scale * factor, rotation=turn, grayscale=True).to_pil()
            again = ocr_page_text(
                engine.read(smaller),
                replace(frame, width=smaller.width, height=smaller.height),
            )
            if again.mean_confidence > text.mean_confidence:
                text, scale = again, scale * factor
    finally:
        page.close()
    info = OcrInfo(
        engine=engine.name,
        languages=engine.languages,
        dpi=round(scale * 72.0, 1),
        mean_confidence=round(text.mean_confidence, 1),
        words=text.words,
        rotation=turn,
    )
    return _OcrResult(text.page, info)


def _needs_ocr(page: _RawPage) -> bool:
    return page.error is None and not has_usable_text(page.chars.text)


def _run_ocr(
    document: pdfium.PdfDocument,
    pages: Sequence[int],
    settings: OcrSettings,
    engine: OcrEngine | None,
    on_page: OcrProgress | None,
    report: ExtractionReport,
) -> tuple[dict[int, _OcrResult], str | None]:
    """OCR ``pages``; the results by page index, and why OCR could not run (None if it could)."""
    own = engine is None
    if engine is None:
        try:
            engine = TesseractEngine(settings.languages, settings.tessdata)
        except OcrUnavailable as exc:
            return {}, str(exc)
    results: dict[int, _OcrResult] = {}
    try:
        for done, index in enumerate(pages, start=1):
            try:
                with span("ocr", page=index):
                    results[index] = _ocr_page(document, index, engine, settings)
            except (RuntimeError, pdfium.PdfiumError) as exc:
                report.warnings.append(f"page {index + 1}: OCR failed ({exc})")
            if on_page is not None:
                on_page(done, len(pages))
    except OcrUnavailable as exc:  # a shared engine opens on its first page
        return results, str(exc)
    finally:
        if own:
            engine.close()
    return results, None


def _open(data: bytes, path: Path, password: str | None) -> pdfium.PdfDocument:
    if b"%PDF-" not in data[:_HEADER_WINDOW]:
        raise ExtractionError(
            "not_pdf", f"{path.name} is not a PDF file (no %PDF header).", path=str(path)
        )
    try:
        return pdfium.PdfDocument(data, password=password)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
            hint = "the password given is wrong" if password else "it needs a password"
            raise ExtractionError(
                "encrypted",
                f"{path.name} is encrypted and {hint}; ingest it again with its password.",
                path=str(path),
            ) from exc
        raise ExtractionError(
            "corrupt",
            f"{path.name} is damaged or truncated and cannot be read ({exc}).",
            path=str(path),
        ) from exc


@dataclass(frozen=True, slots=True)
class _Bookmark:
    """An outline entry as pdfium gives it: the page it points to and, if known, the y where
    the view starts (PDF user space, the top edge of the view)."""

    title: str
    page: int
    top: float | None
    depth: int


# pdfium's destination view modes (fpdf_doc.h) and where each keeps its "top" parameter.
_VIEW_TOP_PARAM = {1: 1, 3: 0, 7: 0}  # XYZ (left, top, zoom), FitH (top), FitBH (top)
_OUTLINE_BAND = 48.0  # points below a view's top where its heading may start
_OUTLINE_MAX_ENTRIES = 2000  # a malformed outline can be huge; segments need far fewer


def _read_outline(document: pdfium.PdfDocument) -> list[_Bookmark]:
    """The bookmarks (outline) that point to a page of this document, in outline order."""
    marks: list[_Bookmark] = []
    try:
        for item in document.get_toc(max_depth=8):
            if len(marks) >= _OUTLINE_MAX_ENTRIES:
                break
            dest = item.get_dest()
            if dest is None:
                continue  # an action bookmark (URI, launch): nothing in this document
            page = dest.get_index()
            if page is None or not 0 <= page < len(document):
                continue
            title = " ".join((item.get_title() or "").replace("\x00", "").split())
            if not title:
                continue
            top: float | None = None
            try:
                mode, params = dest.get_view()
                at = _VIEW_TOP_PARAM.get(int(mode))
                if at is not None and at < len(params) and params[at] > 0:
                    top = float(params[at])
            except (pdfium.PdfiumError, TypeError, ValueError):
                top = None
            marks.append(_Bookmark(title, int(page), top, int(item.level)))
    except pdfium.PdfiumError:
        return marks  # a broken outline is no reason to refuse the text
    return marks


def outline_offset(unit: Unit, top: float | None) -> int:
    """Where a bookmark that shows ``unit`` from y = ``top`` down starts in the unit's text.

    The first character (in reading order) whose glyph box tops out just below ``top`` (within
    :data:`_OUTLINE_BAND` points): the heading the bookmark names. Page numbers and running
    footers also lie below ``top`` and may come first in reading order, hence the band; failing
    that, the first character anywhere below ``top``; without a ``top``, the page's start.
    """
    if top is None:
        return 0
    below: int | None = None
    for i, box in enumerate(unit.boxes):
        if box is None or unit.text[i].isspace() or box[3] > top + 2.0:
            continue
        if box[3] >= top - _OUTLINE_BAND:
            return i
        if below is None:
            below = i
    return below or 0


def _toc(marks: Sequence[_Bookmark], units: Sequence[Unit]) -> list[TocEntry]:
    return [
        TocEntry(
            title=mark.title,
            unit=mark.page,
            offset=outline_offset(units[mark.page], mark.top),
            depth=mark.depth,
            href=f"#page={mark.page + 1}",
        )
        for mark in marks
        if mark.page < len(units)
    ]


def _metadata_title(document: pdfium.PdfDocument) -> str:
    """The Title of the document information ("" when absent or unreadable)."""
    try:
        return str(document.get_metadata_value("Title"))
    except (pdfium.PdfiumError, KeyError):
        return ""


def _no_text_message(path: Path, settings: OcrSettings, pages: int, ocr_problem: str | None) -> str:
    scanned = f"{path.name} has no text layer (scanned pages?)"
    if not settings.enabled:
        return (
            f"{scanned} and OCR is off: set TRUTHBASE_OCR__ENABLED=true to read it with "
            "Tesseract, or give it a text layer first (`ocrmypdf in.pdf out.pdf`)."
        )
    if ocr_problem is not None:
        return f"{scanned} and OCR cannot run: {ocr_problem}. To read it, {HOW_TO_ENABLE}."
    return f"{scanned}, and OCR found no text on its {pages} page(s)."


def extract_pdf(
    path: Path,
    *,
    password: str | None = None,
    ocr: OcrSettings | None = None,
    engine: OcrEngine | None = None,
    on_ocr_page: OcrProgress | None = None,
    name: str | None = None,
) -> ExtractedDocument:
    """Extract every page of a PDF into canonical text with one glyph box per character.

    Pages without a usable text layer are OCR'd when ``ocr.enabled`` (the default settings
    when None) with ``engine`` (Tesseract with ``ocr``'s languages when None, opened for this
    document only); ``on_ocr_page`` hears of each OCR'd page. ``name``: the file's name as its
    owner knows it (:func:`~truthbase.extract.extract_path`), else ``path``'s.

    Raises ExtractionError (reason "not_pdf", "encrypted", "corrupt" or "no_text") for files
    that cannot be ingested; pages without text inside a readable document become empty units.
    """
    path = Path(path)
    settings = ocr if ocr is not None else OcrSettings()
    data = path.read_bytes()
    document = _open(data, path, password)
    report = ExtractionReport()
    ocr_results: dict[int, _OcrResult] = {}
    ocr_problem: str | None = None
    try:
        metadata_title = _metadata_title(document)
        raw_pages = [_read_page(document, i) for i in range(len(document))]
        outline = _read_outline(document)
        wanted = [i for i, page in enumerate(raw_pages) if _needs_ocr(page)]
        if wanted and settings.enabled:
            ocr_results, ocr_problem = _run_ocr(
                document, wanted, settings, engine, on_ocr_page, report
            )
    finally:
        document.close()
    # OCR text replaces a page's own only where the engine read words (a blank page stays so).
    ocr_results = {i: r for i, r in ocr_results.items() if r.info.words}
    if wanted and len(wanted) < len(raw_pages) and not settings.enabled:
        report.warnings.append(f"{len(wanted)} page(s) have no text layer and OCR is off")
    elif ocr_problem is not None and len(wanted) < len(raw_pages):
        report.warnings.append(
            f"{len(wanted)} page(s) have no text layer and OCR cannot run: {ocr_problem}"
        )

    if raw_pages and all(p.error is not None for p in raw_pages):
        raise ExtractionError(
            "corrupt", f"{path.name}: no page of the document can be loaded.", path=str(path)
        )
    # Each stage's pages replace the last's as they are made (one document's boxes at a time).
    cleaned: list[PageChars] = []
    for i, raw_page in enumerate(raw_pages):
        cleaned.append(_packed(clean_page(raw_page.chars)))
        raw_pages[i] = replace(raw_page, chars=EMPTY)
    if any(has_private_use(chars) for chars in cleaned):
        plain: list[str] = []
        keyed: list[Template] = []
        for chars in cleaned:
            page_plain, page_keyed = pua_words(chars)
            plain.extend(page_plain)
            keyed.extend(page_keyed)
        keys = [key for chars in cleaned for key in pua_keys(chars)]
        repair = infer_from_words(plain, keyed, keys)
    else:
        repair = PuaRepair()  # no private-use glyph: nothing to infer (what inference returns)
    report.ligature_words_repaired = repair.words_repaired
    report.ligature_codepoints = {
        pua_key_label(key): letters for key, letters in sorted(repair.mapping.items())
    }
    if repair.unresolved:
        left = ", ".join(f"{pua_key_label(k)} x{n}" for k, n in sorted(repair.unresolved.items()))
        report.warnings.append(f"private-use glyphs left as they are (not ligatures?): {left}")

    expanded: list[PageText] = []
    for i, chars in enumerate(cleaned):
        page = ocr_results[i].page if i in ocr_results else expand_page_chars(chars, repair.mapping)
        expanded.append(PageText(page.text, packed_boxes(page.boxes)))
        cleaned[i] = EMPTY
    decisions = decide_line_end_hyphens([page.text for page in expanded])
    report.compound_hyphens_kept = sum(sum(page) for page in decisions)

    units: list[Unit] = []
    page_tables: list[list[PageTable]] = []
    for index, (raw_page, keep) in enumerate(zip(raw_pages, decisions, strict=True)):
        page_text = finish_page(expanded[index], keep)
        expanded[index] = _DONE
        read = ocr_results.get(index)
        tables: list[PageTable] = []
        grids = (
            find_grids(raw_page.rules, raw_page.text_rotation)
            if read is None and could_grid(raw_page.rules)
            else []
        )
        if grids:  # ruled tables of the page's own text layer (not of OCR text)
            page_text, tables = assemble_tables(page_text, grids, raw_page.text_rotation)
        page_tables.append(tables)
        units.append(
            Unit(
                index=index,
                text=page_text.text,
                boxes=packed_boxes(page_text.boxes),
                label=raw_page.label,
                geometry=raw_page.geometry,
                text_source="ocr" if read is not None else "pdf",
                ocr=read.info if read is not None else None,
                figures=figure_blocks(page_text.text),
            )
        )
        if raw_page.error is not None:
            report.warnings.append(raw_page.error)
        if read is not None:
            report.ocr_pages.append(index)
            if read.info.mean_confidence < settings.min_confidence:
                report.warnings.append(
                    f"page {index + 1}: OCR mean word confidence {read.info.mean_confidence:.0f} "
                    f"is below {settings.min_confidence:.0f} (its text may be wrong)"
                )
        elif raw_page.unmapped:
            report.warnings.append(
                f"page {index + 1}: {raw_page.unmapped} characters have no Unicode mapping "
                "(their text may be wrong)"
            )
        if not page_text.text.strip():
            report.empty_units += 1

    link_headers(page_tables)
    for unit, tables in zip(units, page_tables, strict=True):
        unit.tables = [table.record() for table in tables]
    report.tables = sum(len(tables) for tables in page_tables)

    if report.empty_units == len(units):
        raise ExtractionError(
            "no_text", _no_text_message(path, settings, len(units), ocr_problem), path=str(path)
        )
    return ExtractedDocument(
        sha256=hashlib.sha256(data).hexdigest(),
        title=document_title(metadata_title, units, Path(name or path.name).stem),
        path=str(path),
        kind="pdf",
        units=units,
        extractor_version=EXTRACTOR_VERSION,
        report=report,
        toc=_toc(outline, units),
    )
