#!/usr/bin/env bash
# make demo: ingest a corpus into var/demo.sqlite, run a few example searches, then serve the app.
set -euo pipefail
bin=$1
db=$2
corpus=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$corpus" ]; then
  if [ -d "$here/../shared/corpus/seed" ]; then
    corpus="$here/../shared/corpus/seed"
  else
    echo "No corpus: name a folder of PDFs with 'make demo CORPUS=path/to/pdfs'." >&2
    exit 2
  fi
fi
echo ">> ingesting $corpus into $db"
mkdir -p "$(dirname "$db")"
"$bin/truthbase" --db "$db" ingest "$corpus" || echo "(some files failed; see the table above)"
"$bin/truthbase" --db "$db" docs
for q in "Which function did CSF 2.0 add?" \
         "What are the characteristics of trustworthy AI?" \
         "How does RAPTOR build its tree of summaries?" \
         "What are reflection tokens in Self-RAG?"; do
  "$bin/truthbase" --db "$db" search --k 3 "$q"
done
echo ">> serving the chat page and viewer (Ctrl-C stops)"
exec "$bin/truthbase" --db "$db" serve
