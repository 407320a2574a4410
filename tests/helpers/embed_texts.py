"""Texts the embedder tests run through the real bundled model: ordinary sentences, a short
one, an empty one, one near the length limit, and non-ASCII text."""

from __future__ import annotations

TEXTS = [
    "The Govern function establishes the organization's cybersecurity risk management strategy.",
    "RAPTOR recursively clusters and summarizes chunks into a tree.",
    "Short.",
    "",
    "Self-RAG trains a language model to retrieve, generate and critique with reflection tokens, "
    "so that it can decide on demand whether retrieval helps the answer at all.",
    "Ünïcödé text — with dashes, “quotes” and 数字 survives tokenization.",
]
