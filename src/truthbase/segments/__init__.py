"""Segments: a document cut into sections (by TOC, outline or size), each with a summary that
carries position tags, and the book tools an agent calls to read them."""
