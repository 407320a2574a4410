"""Every XML parse of the app (an EPUB's container, package and navigation documents): through
defusedxml, so no entity declaration, external entity or external DTD is ever expanded, in
whatever encoding the document declares (a byte search for ``<!ENTITY`` misses UTF-16).

A DOCTYPE alone is allowed: NCX files and XHTML navigation documents carry one.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from ..errors import InvalidInput

__all__ = ["UnsafeXml", "parse_xml"]


class UnsafeXml(InvalidInput):
    """The document declares entities or references something outside itself."""


def parse_xml(data: bytes) -> ET.Element:
    """The root element of ``data``. Raises :class:`UnsafeXml` for entity declarations and
    external references, ``xml.etree.ElementTree.ParseError`` for malformed XML."""
    try:
        return fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise UnsafeXml(
            f"declares XML entities or external references ({type(exc).__name__})"
        ) from exc
    except (ValueError, LookupError) as exc:  # expat: "multi-byte encodings are not supported"
        raise ET.ParseError(f"unsupported encoding ({exc})") from exc
