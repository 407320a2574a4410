"""The OCR engine behind a small Protocol: Tesseract 5 through tesserocr, and a scripted fake.

tesserocr calls libtesseract's C++ API in-process (its PyPI wheel bundles libtesseract and
leptonica, so nothing compiles): one initialized engine reads page after page, and the result
iterator gives words, symbols, baselines and confidences without a subprocess or a TSV round
trip per page. Measured against pytesseract (a `tesseract` process per page) on the corpus scans
at 300 dpi: 1.2 s against 5.6 s (c02-22), 3.4 s against 20.7 s (linn), same words.

The language models (``*.traineddata``) are Debian's (``tesseract-ocr-eng``, ``-deu``): the
wheel has none. ``scripts/install-system.sh ocr`` installs them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import TruthBaseError
from .ocr import OcrLine, OcrPage, OcrWord, PixelBox

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "TESSDATA_DIRS",
    "OcrEngine",
    "OcrUnavailable",
    "ScriptedOcrEngine",
    "TesseractEngine",
    "find_tessdata",
]

#: Where Tesseract's language models usually are (Debian/Ubuntu 5 and 4, Fedora, Homebrew).
TESSDATA_DIRS = (
    Path("/usr/share/tesseract-ocr/5/tessdata"),
    Path("/usr/share/tesseract-ocr/4.00/tessdata"),
    Path("/usr/share/tessdata"),
    Path("/usr/local/share/tessdata"),
    Path("/opt/homebrew/share/tessdata"),
)

#: What to do when the engine is missing (the no_text message of a scan says it).
HOW_TO_ENABLE = (
    "install Tesseract with `sudo bash scripts/install-system.sh ocr` (Debian: apt-get install "
    "tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu) and the tesserocr package (pip install "
    "tesserocr)"
)

# OSD's orientation confidence below this is a guess (text-poor pages); measured on the corpus
# scans turned by 90, 180 and 270 degrees: 14 to 16 when right.
_MIN_ORIENTATION_CONFIDENCE = 5.0


class OcrUnavailable(TruthBaseError):
    """The OCR engine cannot run here (binding or language models missing); says what to do."""


class OcrEngine(Protocol):
    """Reads rendered pages. ``name`` carries the version (``tesseract 5.5.4``)."""

    @property
    def name(self) -> str: ...

    @property
    def languages(self) -> str: ...

    def orientation(self, image: Image) -> int:
        """Clockwise degrees (0, 90, 180, 270) to turn ``image`` so that its text stands
        upright; 0 when unsure."""
        ...

    def read(self, image: Image) -> OcrPage: ...

    def close(self) -> None: ...


def find_tessdata(languages: str, tessdata: Path | None = None) -> Path:
    """The folder holding every model ``languages`` names (``eng+deu``); OcrUnavailable
    naming the missing Debian packages otherwise."""
    names = [name for name in languages.split("+") if name]
    candidates = [tessdata] if tessdata is not None else list(TESSDATA_DIRS)
    for folder in candidates:
        if all((folder / f"{name}.traineddata").is_file() for name in names):
            return folder
    where = str(tessdata) if tessdata is not None else ", ".join(str(d) for d in TESSDATA_DIRS)
    packages = " ".join(f"tesseract-ocr-{name}" for name in names)
    raise OcrUnavailable(
        f"Tesseract language models {languages} not found in {where}: install {packages} "
        f"(or set TRUTHBASE_OCR__TESSDATA to their folder)"
    )


def _box(value: Any) -> PixelBox | None:
    if not value:
        return None
    left, top, right, bottom = (float(v) for v in value)
    return (left, top, right, bottom)


class TesseractEngine:
    """Tesseract 5 via tesserocr: page segmentation with its own deskew (``PSM.AUTO``), the
    LSTM recognizer, orientation and script detection (OSD) on request."""

    def __init__(self, languages: str = "eng+deu", tessdata: Path | None = None) -> None:
        try:
            import tesserocr
        except ImportError as exc:  # the wheel is a dependency; a platform without one
            raise OcrUnavailable(
                f"the tesserocr package cannot be imported ({exc}): pip install tesserocr"
            ) from exc
        self._tesserocr = tesserocr
        self._folder = find_tessdata(languages, tessdata)
        self._languages = languages
        try:
            self._api = tesserocr.PyTessBaseAPI(
                path=str(self._folder), lang=languages, psm=tesserocr.PSM.AUTO
            )
        except RuntimeError as exc:
            raise OcrUnavailable(f"Tesseract cannot load {languages}: {exc}") from exc
        version = str(tesserocr.tesseract_version()).split()
        self._name = f"tesseract {version[1]}" if len(version) > 1 else "tesseract"
        self._osd: Any = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def languages(self) -> str:
        return self._languages

    def orientation(self, image: Image) -> int:
        tesserocr = self._tesserocr
        if self._osd is None:
            if not (self._folder / "osd.traineddata").is_file():
                return 0
            self._osd = tesserocr.PyTessBaseAPI(
                path=str(self._folder), lang="osd", psm=tesserocr.PSM.OSD_ONLY
            )
        self._osd.SetImage(image)
        try:
            found = self._osd.DetectOrientationScript()
        except RuntimeError:
            return 0  # too little text to tell
        if not found or float(found.get("orient_conf", 0.0)) < _MIN_ORIENTATION_CONFIDENCE:
            return 0
        # OSD reports how far the text is turned clockwise; turning on by the rest of the
        # circle stands it upright.
        return (360 - int(found.get("orient_deg", 0))) % 360

    def read(self, image: Image) -> OcrPage:
        RIL = self._tesserocr.RIL
        api = self._api
        api.SetImage(image)
        api.Recognize()
        lines: list[OcrLine] = []
        words: list[OcrWord] = []
        line_info: tuple[Any, Any, Any] = (None, None, None)
        symbols: list[tuple[str, PixelBox]] = []
        word_box: PixelBox | None = None
        word_conf = 0.0

        def end_word() -> None:
            if word_box is not None and symbols:
                text = "".join(t for t, _ in symbols)
                words.append(OcrWord(text, word_box, word_conf, tuple(symbols)))

        def end_line() -> None:
            if words:
                baseline, ascent, descent = line_info
                lines.append(OcrLine(tuple(words), baseline, ascent, descent))

        iterator = api.GetIterator()
        if iterator is not None:
            level = RIL.SYMBOL
            for symbol in self._tesserocr.iterate_level(iterator, level):
                if symbol.IsAtBeginningOf(RIL.WORD):
                    end_word()
                    if symbol.IsAtBeginningOf(RIL.TEXTLINE):
                        end_line()
                        words = []
                        line_info = _line_info(symbol, RIL.TEXTLINE)
                    symbols = []
                    word_box = _box(symbol.BoundingBox(RIL.WORD))
                    word_conf = float(symbol.Confidence(RIL.WORD))
                text = symbol.GetUTF8Text(level) or ""
                box = _box(symbol.BoundingBox(level))
                if text and box is not None:
                    symbols.append((text, box))
            end_word()
            end_line()
        width, height = image.size
        return OcrPage(tuple(lines), int(width), int(height))

    def close(self) -> None:
        for api in (self._api, self._osd):
            if api is not None:
                api.End()
        self._osd = None


def _line_info(
    iterator: Any, level: Any
) -> tuple[tuple[tuple[float, float], tuple[float, float]] | None, float | None, float | None]:
    """The line's baseline and its letters' ascent and descent in pixels (Tesseract's row
    attributes: row height = x-height + ascenders - descenders, descenders negative)."""
    try:
        baseline = iterator.Baseline(level)
        attributes = iterator.RowAttributes()
    except (RuntimeError, AttributeError):
        return None, None, None
    if not baseline or not attributes:
        return None, None, None
    (x0, y0), (x1, y1) = baseline
    height = float(attributes.get("row_height", 0.0))
    descenders = float(attributes.get("descenders", 0.0))
    ascent = height + descenders
    return ((float(x0), float(y0)), (float(x1), float(y1))), ascent, -descenders


class ScriptedOcrEngine:
    """A fake engine for tests: hands out the given pages in order (with the size of the image
    it is shown, whose size it records) and reports the turn it was given as the orientation."""

    def __init__(self, pages: Iterable[OcrPage], *, turn: int = 0, name: str = "scripted 1"):
        self._pages = list(pages)
        self._turn = turn
        self._name = name
        self.images: list[tuple[int, int]] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def languages(self) -> str:
        return "eng"

    def orientation(self, image: Image) -> int:
        return self._turn

    def read(self, image: Image) -> OcrPage:
        self.images.append(image.size)
        page = self._pages.pop(0)
        width, height = image.size
        return OcrPage(page.lines, int(width), int(height))

    def close(self) -> None:
        self._pages = []


def words_line(words: Sequence[tuple[str, PixelBox, float]]) -> OcrLine:
    """A line of whole words without symbols (for the fake and the tests)."""
    return OcrLine(tuple(OcrWord(text, box, conf) for text, box, conf in words))
