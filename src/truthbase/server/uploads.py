"""Receiving uploads: a multipart body streamed to disk in bounded chunks, each file by content.

The body is never held in memory: :func:`receive_files` feeds the request stream, chunk by
chunk, to python-multipart's streaming parser, which hands each file part's bytes to a temporary
file under ``<data>/uploads/.incoming/`` while they are hashed. A part over
``max_file_bytes`` stops the read at once (:class:`~truthbase.jobs.LimitExceeded`, 413): at
most the limit plus one chunk is ever written, and the partial file is removed. The sender's
file name is kept for display only; the file's kind is read from its first bytes
(:func:`truthbase.extract.sniff.sniff_kind`), and the upload use case
(:meth:`truthbase.app.Service.upload`) stores it by its hash, so no part of the request names a
path.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import unicodedata
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from ..app.uploads import MAX_FILES, ReceivedFile, incoming_dir
from ..errors import InvalidInput
from ..extract.sniff import HEAD_BYTES, sniff_kind
from ..jobs import LimitExceeded

__all__ = ["Upload", "receive_files"]

#: Form fields other than files: at most this many bytes each (a visibility, nothing more).
_FIELD_LIMIT = 1024


@dataclass(slots=True)
class Upload:
    """A multipart body received: its files (on disk, :class:`ReceivedFile`) and fields."""

    files: list[ReceivedFile] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)


def _display_name(raw: bytes | None) -> str:
    """The sender's file name, for display: its last path component, control characters
    dropped, at most 200 characters."""
    name = (raw or b"").decode("utf-8", "replace").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip()
    return name[:200] or "upload"


class _Sink:
    """python-multipart's callbacks: one temporary file per file part, fields in memory."""

    def __init__(self, incoming: Path, max_file_bytes: int) -> None:
        self.incoming = incoming
        self.max_file_bytes = max_file_bytes
        self.upload = Upload()
        self._header_field = bytearray()
        self._header_value = bytearray()
        self._headers: dict[bytes, bytes] = {}
        self._handle: IO[bytes] | None = None
        self._temp: Path | None = None
        self._digest = hashlib.sha256()
        self._size = 0
        self._head = bytearray()
        self._field: bytearray | None = None
        self._name: str | None = None
        self._filename: bytes | None = None

    def callbacks(self) -> dict[str, object]:
        return {
            "on_part_begin": self.part_begin,
            "on_header_field": lambda d, s, e: self._header_field.extend(d[s:e]),
            "on_header_value": lambda d, s, e: self._header_value.extend(d[s:e]),
            "on_header_end": self.header_end,
            "on_headers_finished": self.headers_finished,
            "on_part_data": self.part_data,
            "on_part_end": self.part_end,
        }

    def part_begin(self) -> None:
        self._headers = {}

    def header_end(self) -> None:
        self._headers[bytes(self._header_field).lower()] = bytes(self._header_value)
        self._header_field.clear()
        self._header_value.clear()

    def headers_finished(self) -> None:
        _, options = parse_options_header(self._headers.get(b"content-disposition", b""))
        self._name = options.get(b"name", b"").decode("utf-8", "replace")
        self._filename = options.get(b"filename")
        if self._filename is not None:
            if len(self.upload.files) >= MAX_FILES:
                raise InvalidInput(f"at most {MAX_FILES} files per upload")
            fd, name = tempfile.mkstemp(dir=self.incoming, suffix=".part")
            self._handle = os.fdopen(fd, "wb")
            self._temp = Path(name)
            self._digest = hashlib.sha256()
            self._size = 0
            self._head = bytearray()
        else:
            self._field = bytearray()

    def part_data(self, data: bytes, start: int, end: int) -> None:
        chunk = data[start:end]
        if self._handle is not None:
            self._size += len(chunk)
            if self._size > self.max_file_bytes:
                raise LimitExceeded(
                    "file_size",
                    f"{_display_name(self._filename)} is larger than the upload limit of "
                    f"{self.max_file_bytes} bytes",
                )
            self._handle.write(chunk)
            self._digest.update(chunk)
            if len(self._head) < HEAD_BYTES:
                self._head.extend(chunk[: HEAD_BYTES - len(self._head)])
        elif self._field is not None:
            self._field.extend(chunk)
            if len(self._field) > _FIELD_LIMIT:
                raise InvalidInput(f"form field {self._name!r} is too long")

    def part_end(self) -> None:
        if self._handle is not None and self._temp is not None:
            self._handle.close()
            self.upload.files.append(
                ReceivedFile(
                    filename=_display_name(self._filename),
                    temp=self._temp,
                    sha256=self._digest.hexdigest(),
                    size=self._size,
                    kind=sniff_kind(bytes(self._head)),
                )
            )
            self._handle, self._temp = None, None
        elif self._field is not None and self._name:
            self.upload.fields[self._name] = self._field.decode("utf-8", "replace")
        self._field = None

    def abort(self) -> None:
        """Remove every file written so far (the request failed)."""
        if self._handle is not None:
            self._handle.close()
        if self._temp is not None:
            self._temp.unlink(missing_ok=True)
        for received in self.upload.files:
            received.temp.unlink(missing_ok=True)


async def receive_files(
    content_type: str | None,
    stream: AsyncIterator[bytes],
    data_dir: Path,
    max_file_bytes: int,
) -> Upload:
    """Parse a ``multipart/form-data`` body from ``stream`` into files on disk and fields.
    InvalidInput (400) for a body that is not multipart or is malformed; LimitExceeded (413)
    for a file over ``max_file_bytes``; on any error nothing stays on disk."""
    media, options = parse_options_header(content_type or "")
    boundary = options.get(b"boundary")
    if media != b"multipart/form-data" or not boundary:
        raise InvalidInput("upload as multipart/form-data with one or more files")
    sink = _Sink(incoming_dir(data_dir), max_file_bytes)
    try:
        # In the try: the parser refuses a boundary over 256 bytes as it is made.
        parser = MultipartParser(boundary, sink.callbacks())  # type: ignore[arg-type]
        async for chunk in stream:
            parser.write(chunk)
        parser.finalize()
    except FormParserError as exc:  # MultipartParseError and the boundary's own errors
        sink.abort()
        raise InvalidInput(f"malformed multipart body: {exc}") from exc
    except BaseException:
        sink.abort()
        raise
    if not sink.upload.files:
        raise InvalidInput("the upload has no file (send it as a form field with a filename)")
    return sink.upload
