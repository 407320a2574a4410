"""OCR's pure core (extract/ocr.py): pixels to user space through each rotation and crop box,
letter boxes, the page text's rules; and extract_pdf's OCR path with the scripted engine on
PDFs made here (no Tesseract needed)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from truthbase.config import OcrSettings
from truthbase.extract import ExtractionError, extract_pdf
from truthbase.extract.hyphens import HYPHEN_MARK
from truthbase.extract.ocr import (
    OcrLine,
    OcrPage,
    OcrWord,
    RenderFrame,
    has_usable_text,
    large_print_factor,
    letter_boxes,
    ocr_page_text,
    pixel_to_user,
    render_scale,
)
from truthbase.extract.tesseract import ScriptedOcrEngine, find_tessdata, words_line
from truthbase.extract.text import finish_page

CROPBOX = (30.0, 40.0, 530.0, 840.0)  # 500 x 800 points, offset from the origin


def _device_to_page(page: pdfium.PdfPage, size: tuple[int, int], turn: int, x: int, y: int):
    """pdfium's own inverse of its rendering (the reference for ``pixel_to_user``)."""
    page_x, page_y = ctypes.c_double(), ctypes.c_double()
    ok = pdfium_c.FPDF_DeviceToPage(
        page, 0, 0, size[0], size[1], turn // 90, x, y, ctypes.byref(page_x), ctypes.byref(page_y)
    )
    assert ok
    return page_x.value, page_y.value


@pytest.mark.parametrize("page_rotation", [0, 90, 180, 270])
@pytest.mark.parametrize("turn", [0, 90])
def test_pixels_map_to_user_space_as_pdfium_renders(page_rotation: int, turn: int) -> None:
    """For every /Rotate and an extra turn of the render, with a crop box off the origin, the
    mapping agrees with pdfium's FPDF_DeviceToPage for the same render."""
    document = pdfium.PdfDocument.new()
    page = document.new_page(600, 900)
    page.set_cropbox(*CROPBOX)
    page.set_rotation(page_rotation)
    width, height = page.get_size()
    scale = 2.0
    image = page.render(scale=scale, rotation=turn, grayscale=True).to_pil()
    frame = RenderFrame(
        cropbox=CROPBOX,
        rotation=(page_rotation + turn) % 360,
        width=image.width,
        height=image.height,
    )
    for x, y in [(0, 0), (image.width, 0), (0, image.height), (123, 457), (image.width, 31)]:
        ux, uy, _, _ = pixel_to_user((x, y, x, y), frame)
        rx, ry = _device_to_page(page, image.size, turn, x, y)
        assert ux == pytest.approx(rx, abs=0.6)  # pdfium rounds to whole device pixels
        assert uy == pytest.approx(ry, abs=0.6)
    # the whole image is the whole crop box
    assert pixel_to_user((0, 0, image.width, image.height), frame) == pytest.approx(CROPBOX)
    assert {image.width, image.height} == {round(width * scale), round(height * scale)}


def test_a_box_maps_by_hand_for_each_rotation() -> None:
    box = (10.0, 20.0, 30.0, 60.0)  # pixels, y down, of a 100 x 200 image
    crop = (0.0, 0.0, 50.0, 100.0)
    upright = RenderFrame(cropbox=crop, rotation=0, width=100, height=200)
    assert pixel_to_user(box, upright) == (5.0, 70.0, 15.0, 90.0)
    # turned 90 clockwise: the image is 200 x 100 pixels of a 100 x 50 display
    turned = RenderFrame(cropbox=crop, rotation=90, width=200, height=100)
    assert pixel_to_user(box, turned) == (10.0, 5.0, 30.0, 15.0)
    upside = RenderFrame(cropbox=crop, rotation=180, width=100, height=200)
    assert pixel_to_user(box, upside) == (35.0, 10.0, 45.0, 30.0)
    back = RenderFrame(cropbox=crop, rotation=270, width=200, height=100)
    assert pixel_to_user(box, back) == (20.0, 85.0, 40.0, 95.0)
    with pytest.raises(ValueError, match="multiple of 90"):
        pixel_to_user(box, RenderFrame(cropbox=crop, rotation=45, width=1, height=1))


def test_letters_take_their_symbols_stretch_of_the_word() -> None:
    word = OcrWord(
        "ab",
        (100, 10, 140, 30),
        90.0,
        (("a", (101, 15, 115, 30)), ("b", (121, 10, 139, 30))),
    )
    assert letter_boxes(word) == [("a", (100, 10, 118.0, 30)), ("b", (118.0, 10, 140, 30))]


def test_letters_share_the_word_equally_without_symbols_and_ligatures_split() -> None:
    word = OcrWord("ofﬁce", (0, 0, 50, 10), 90.0)  # five code points, "ﬁ" one of them
    letters = letter_boxes(word)
    assert "".join(t for t, _ in letters) == "office"
    # five equal shares of 10 px; both letters of the ligature keep its share
    assert [b[0] for _, b in letters] == [0, 10, 20, 20, 30, 40]
    assert letters[2][1] == letters[3][1] == (20, 0, 30, 10)


def test_symbols_that_do_not_spell_the_word_fall_back_to_shares() -> None:
    word = OcrWord("ab", (0, 0, 20, 10), 90.0, (("x", (0, 0, 5, 10)),))
    assert letter_boxes(word) == [("a", (0, 0, 10.0, 10)), ("b", (10.0, 0, 20.0, 10))]


def test_a_lines_band_gives_every_letter_the_same_height() -> None:
    line = OcrLine(
        (
            OcrWord("ox", (0, 20, 20, 30), 90.0),  # x-height only
            OcrWord("Ty", (30, 12, 50, 34), 90.0),  # ascender and descender
        ),
        baseline=((0, 30), (100, 30)),
        ascent=20.0,
        descent=5.0,
    )
    tops = {box[1] for word in line.words for _, box in letter_boxes(word, line)}
    bottoms = {box[3] for word in line.words for _, box in letter_boxes(word, line)}
    assert tops == {10.0} and bottoms == {35.0}
    # a skewed baseline moves the band with it
    skewed = OcrLine(line.words, baseline=((0, 30), (100, 40)), ascent=20.0, descent=5.0)
    assert letter_boxes(line.words[1], skewed)[0][1][3] == pytest.approx(39.0)


def _frame(page: OcrPage) -> RenderFrame:
    return RenderFrame(cropbox=(0, 0, page.width, page.height), rotation=0, width=page.width,
                       height=page.height)  # fmt: skip


def test_page_text_synthesizes_spaces_and_breaks_without_boxes() -> None:
    page = OcrPage(
        (
            words_line([("Each", (0, 0, 40, 10), 95), ("of", (50, 0, 70, 10), 90)]),
            words_line([("~", (0, 20, 5, 30), 3), ("the", (0, 20, 30, 30), 92)]),
            words_line([("~~", (0, 40, 9, 50), 1)]),  # a speck: the line goes
        ),
        width=100,
        height=100,
    )
    result = ocr_page_text(page, _frame(page))
    assert result.page.text == "Each of\nthe"
    assert result.words == 3
    assert result.mean_confidence == pytest.approx((95 + 90 + 92) / 3)
    for ch, box in zip(result.page.text, result.page.boxes, strict=True):
        assert (box is None) == ch.isspace()
    # y flips: the first line is at the top of the page in user space
    first, last = result.page.boxes[0], result.page.boxes[-1]
    assert first is not None and last is not None and first[1] > last[1]


def test_a_line_end_hyphen_before_a_letter_becomes_the_mark() -> None:
    page = OcrPage(
        (
            words_line([("pro-", (0, 0, 40, 10), 95)]),
            words_line([("gram", (0, 20, 40, 30), 95), ("2-", (50, 20, 60, 30), 95)]),
            words_line([("3", (0, 40, 10, 50), 95)]),
        ),
        width=100,
        height=100,
    )
    result = ocr_page_text(page, _frame(page))
    assert result.page.text == f"pro{HYPHEN_MARK}gram 2-\n3"
    assert result.page.boxes[3] is not None  # the mark keeps the hyphen's box
    joined = finish_page(result.page, [False])
    assert joined.text == "program 2-\n3" and len(joined.boxes) == len(joined.text)


def test_usable_text_needs_a_letter_or_a_digit() -> None:
    assert not has_usable_text("")
    assert not has_usable_text("\x19\x12 \r\n")
    assert has_usable_text("0 2 4")
    assert has_usable_text("日本語")


def test_render_scale_keeps_to_the_pixel_budget() -> None:
    assert render_scale(612, 792, 300, 25) == pytest.approx(300 / 72)
    poster = render_scale(2160, 2160, 300, 25)
    assert (2160 * poster) ** 2 == pytest.approx(25e6)


def test_large_print_is_read_again_smaller() -> None:
    def page(ascent: float) -> OcrPage:
        line = OcrLine((OcrWord("x", (0, 0, 1, 1), 90),), ((0, 0), (1, 0)), ascent, 1.0)
        return OcrPage((line,), 10, 10)

    assert large_print_factor(page(30)) is None
    assert large_print_factor(page(120)) == pytest.approx(0.5)
    assert large_print_factor(OcrPage((), 10, 10)) is None


def _blank_pdf(path: Path, pages: int = 1, text_page: bool = False) -> Path:
    document = pdfium.PdfDocument.new()
    for _ in range(pages):
        document.new_page(200, 100)
    document.save(str(path))
    return path


def test_extract_reads_a_page_without_text_through_the_engine(tmp_path: Path) -> None:
    pdf = _blank_pdf(tmp_path / "scan.pdf", pages=2)
    line = words_line([("Scanned", (10, 10, 90, 30), 91.0), ("words", (100, 10, 160, 30), 89.0)])
    engine = ScriptedOcrEngine([OcrPage((line,), 1, 1), OcrPage((), 1, 1)])
    seen: list[tuple[int, int]] = []
    document = extract_pdf(
        pdf,
        ocr=OcrSettings(dpi=144, min_confidence=95),
        engine=engine,
        on_ocr_page=lambda done, total: seen.append((done, total)),
    )
    assert seen == [(1, 2), (2, 2)]
    assert engine.images == [(400, 200), (400, 200)]  # 200 x 100 pt at 144 dpi
    first, second = document.units
    assert first.text == "Scanned words" and first.text_source == "ocr"
    assert first.ocr is not None and first.ocr.engine == "scripted 1" and first.ocr.dpi == 144
    assert first.ocr.words == 2 and first.ocr.mean_confidence == 90.0
    for box in first.boxes:
        assert box is None or (0 <= box[0] <= box[2] <= 200 and 0 <= box[1] <= box[3] <= 100)
    # a blank page that OCR finds nothing on stays the PDF's (empty) page
    assert second.text == "" and second.text_source == "pdf" and second.ocr is None
    assert document.report.ocr_pages == [0]
    assert any("confidence 90 is below 95" in w for w in document.report.warnings)


def test_a_turned_page_is_read_upright_and_mapped_back(tmp_path: Path) -> None:
    pdf = _blank_pdf(tmp_path / "sideways.pdf")
    line = words_line([("Upright", (0, 0, 100, 50), 90.0)])  # top-left of the turned image
    engine = ScriptedOcrEngine([OcrPage((line,), 1, 1)], turn=90)
    document = extract_pdf(pdf, ocr=OcrSettings(dpi=72), engine=engine)
    assert engine.images == [(100, 200)]  # rendered turned: 100 x 200 pixels
    unit = document.units[0]
    assert unit.ocr is not None and unit.ocr.rotation == 90
    # turned 90 clockwise, the image's top-left is user space's bottom-left corner
    boxes = [b for b in unit.boxes if b is not None]
    assert min(b[0] for b in boxes) == pytest.approx(0)
    assert min(b[1] for b in boxes) == pytest.approx(0)
    assert max(b[2] for b in boxes) == pytest.approx(50)
    assert max(b[3] for b in boxes) == pytest.approx(100)


def test_ocr_off_fails_a_scan_with_no_text_saying_how_to_turn_it_on(tmp_path: Path) -> None:
    pdf = _blank_pdf(tmp_path / "scan.pdf")
    with pytest.raises(ExtractionError) as caught:
        extract_pdf(pdf, ocr=OcrSettings(enabled=False), engine=ScriptedOcrEngine([]))
    assert caught.value.reason == "no_text"
    assert "OCR is off" in caught.value.message
    assert "TRUTHBASE_OCR__ENABLED=true" in caught.value.message


def test_without_language_models_a_scan_says_what_to_install(tmp_path: Path) -> None:
    pdf = _blank_pdf(tmp_path / "scan.pdf")
    empty = tmp_path / "tessdata"
    empty.mkdir()
    with pytest.raises(ExtractionError) as caught:
        extract_pdf(pdf, ocr=OcrSettings(tessdata=empty))
    assert caught.value.reason == "no_text"
    message = caught.value.message
    assert "OCR cannot run" in message and "tesseract-ocr-deu" in message
    assert "install-system.sh ocr" in message


def test_find_tessdata_names_the_missing_packages(tmp_path: Path) -> None:
    (tmp_path / "eng.traineddata").write_bytes(b"")
    assert find_tessdata("eng", tmp_path) == tmp_path
    with pytest.raises(Exception, match="tesseract-ocr-eng tesseract-ocr-deu"):
        find_tessdata("eng+deu", tmp_path / "nowhere")


def test_symbols_that_overlap_to_nothing_fall_back_to_shares() -> None:
    word = OcrWord("ab", (0, 0, 20, 10), 90.0, (("a", (0, 0, 2, 10)), ("b", (-10, 0, 20, 10))))
    boxes = [box for _, box in letter_boxes(word)]
    assert boxes == [(0, 0, 10.0, 10), (10.0, 0, 20.0, 10)]


def test_a_vertical_word_is_cut_along_its_own_direction() -> None:
    """Tesseract reads a sideways line as vertical symbols (bottom to top here)."""
    word = OcrWord("ab", (10, 0, 20, 40), 90.0, (("a", (10, 22, 20, 40)), ("b", (10, 0, 20, 18))))
    assert letter_boxes(word) == [("a", (10, 20.0, 20, 40)), ("b", (10, 0, 20, 20.0))]
    down = OcrWord("ab", (10, 0, 20, 40), 90.0, (("a", (10, 0, 20, 18)), ("b", (10, 22, 20, 40))))
    assert letter_boxes(down) == [("a", (10, 0, 20, 20.0)), ("b", (10, 20.0, 20, 40))]
