"""Recall of the access filter: dev.json retrieval for a user who sees everything.

The operator and admins search with no filter at all (``doc_ids=None``); a plain user whose
visible set is every document searches with the filter on, inside each arm. This runs every
dev.json question with PDF evidence over an index of the seed PDFs three ways (no filter; a
user who sees every document, filter on; a user who sees only the question's evidence document)
and reports recall@1/5/8/15 (a hit on an evidence page) for each, and whether the first two
rankings are identical chunk for chunk.

    python benchmarks/access_recall.py --db SEED.sqlite [--database-url URL] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from truthbase.access import visible_ids
from truthbase.config import RetrievalSettings, Settings
from truthbase.embed import default_embedder
from truthbase.eval.golden import load_golden
from truthbase.model import DocumentInfo
from truthbase.people import Viewer
from truthbase.retrieve.hybrid import search
from truthbase.store import open_store

KS = (1, 5, 8, 15)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--golden", type=Path, default=Path("../shared/golden/dev.json"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    settings = Settings(db=args.db, database_url=args.database_url)
    golden = load_golden(args.golden)
    store = open_store(settings)
    embedder = default_embedder()
    retrieval = RetrievalSettings()
    try:
        documents = store.list_documents()
        by_path = {Path(d.path).name: d for d in documents}
        names = {
            name: by_path[Path(doc.path).name]
            for name, doc in golden.documents.items()
            if Path(doc.path).name in by_path
        }
        # every document shared: a plain user then sees them all, through the filter
        shared = [
            DocumentInfo(**{**_fields(d), "owner": "someone", "visibility": "shared"})
            for d in documents
        ]
        everything = visible_ids(Viewer(user="plain"), shared)
        assert everything is not None and len(everything) == len(documents)
        hits = {"none": [0] * len(KS), "all": [0] * len(KS), "own": [0] * len(KS)}
        identical = asked = 0
        for q in golden.questions:
            pages = {(names[e.doc].id, e.page) for e in q.evidence if e.doc in names and e.page}
            if not pages:
                continue
            asked += 1
            own = frozenset(doc for doc, _ in pages)
            runs = {}
            for label, scope in (("none", None), ("all", everything), ("own", own)):
                result = search(store, embedder, q.question, retrieval, k=max(KS), doc_ids=scope)
                runs[label] = [(h.chunk.doc_id, h.chunk.unit + 1, h.chunk.id) for h in result.hits]
                for i, k in enumerate(KS):
                    if any((d, p) in pages for d, p, _ in runs[label][:k]):
                        hits[label][i] += 1
            identical += runs["none"] == runs["all"]
        report = {
            "questions": asked,
            "identical_rankings_unfiltered_vs_sees_everything": identical,
            "recall": {
                label: {f"@{k}": round(h[i] / asked, 4) for i, k in enumerate(KS)}
                for label, h in hits.items()
            },
            "backend": "postgres" if args.database_url else "sqlite",
        }
    finally:
        store.close()
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if identical == asked else 1


def _fields(d: DocumentInfo) -> dict[str, object]:
    return {name: getattr(d, name) for name in DocumentInfo.__slots__}  # type: ignore[attr-defined]


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
