"""The images of an ingested EPUB, served from the book itself (same origin) for the reader.

Only members the OPF manifest lists with a raster image type are served (never SVG: it can hold
scripts and remote references), each within a size limit, read with the same refusals as
ingest (no XML entities, no password-protected members, no member larger than its header says).
The book is found by document id in the store, never by a path from the request.
"""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urldefrag

from ..errors import NotFound
from ..extract.xml_safe import UnsafeXml, parse_xml

#: Raster image types the reader shows; everything else in a book stays unserved.
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
MAX_IMAGE_BYTES = 20 * 1024 * 1024
_CONTAINER = "META-INF/container.xml"


class BookFileError(NotFound):
    """The book cannot serve this member (not an image of its manifest, too large, unreadable)."""


@dataclass(frozen=True, slots=True)
class BookLayout:
    """Where a book's package is and which members are servable images."""

    opf: str  # the OPF package's zip member
    images: dict[str, str]  # zip member -> media type

    def member(self, manifest_href: str) -> str:
        """The zip member an OPF manifest href (e.g. a unit's href) names."""
        return resolve_member(self.opf, manifest_href)


def resolve_member(base_member: str, href: str) -> str:
    """The zip member ``href`` (relative to ``base_member``, fragment ignored) names."""
    path = unquote(urldefrag(href)[0])
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(base_member), path))
    return joined.lstrip("/")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _read(zf: zipfile.ZipFile, member: str, limit: int) -> bytes:
    try:
        info = zf.getinfo(member)
    except KeyError as exc:
        raise BookFileError(f"no member {member!r}") from exc
    if info.flag_bits & 0x1:
        raise BookFileError(f"member {member!r} is password-protected")
    if info.file_size > limit:
        raise BookFileError(f"member {member!r} is larger than {limit} bytes")
    with zf.open(info) as handle:
        data = handle.read(info.file_size + 1)
    if len(data) > info.file_size:
        raise BookFileError(f"member {member!r} is larger than its zip header says")
    return data


def _xml(zf: zipfile.ZipFile, member: str) -> ET.Element:
    data = _read(zf, member, 16 * 1024 * 1024)
    try:
        return parse_xml(data)
    except UnsafeXml as exc:
        raise BookFileError(f"{member} {exc}; refused") from exc
    except ET.ParseError as exc:
        raise BookFileError(f"{member} is not valid XML ({exc})") from exc


def book_layout(path: Path) -> BookLayout:
    """The package location and the servable images of the EPUB at ``path``."""
    try:
        with zipfile.ZipFile(path) as zf:
            opf = ""
            for element in _xml(zf, _CONTAINER).iter():
                if _local(element.tag) == "rootfile" and element.get("full-path"):
                    opf = element.get("full-path", "").lstrip("/")
                    break
            if not opf:
                raise BookFileError("container.xml names no OPF package")
            images: dict[str, str] = {}
            for element in _xml(zf, opf).iter():
                media = element.get("media-type", "")
                if _local(element.tag) == "item" and media in IMAGE_TYPES and element.get("href"):
                    images[resolve_member(opf, element.get("href", ""))] = media
    except (zipfile.BadZipFile, OSError) as exc:
        raise BookFileError(f"cannot read the book ({type(exc).__name__})") from exc
    return BookLayout(opf=opf, images=images)


def read_image(path: Path, layout: BookLayout, member: str) -> tuple[bytes, str]:
    """The bytes and media type of image ``member``; BookFileError unless it is servable."""
    media = layout.images.get(member)
    if media is None:
        raise BookFileError(f"{member!r} is not an image of the book's manifest")
    try:
        with zipfile.ZipFile(path) as zf:
            return _read(zf, member, MAX_IMAGE_BYTES), media
    except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError) as exc:
        raise BookFileError(f"cannot read {member!r} ({type(exc).__name__})") from exc
