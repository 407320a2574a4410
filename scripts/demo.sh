#!/usr/bin/env bash
# make demo: ingest a corpus into var/demo.sqlite, run a few example searches, then serve the app.
# The corpus, in order: CORPUS=, ../shared/corpus/seed, else the four public seed documents
# downloaded from their publishers into ${XDG_CACHE_HOME:-~/.cache}/truthbase/seed (reused).
set -euo pipefail
bin=$1
db=$2
corpus=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
paths=()
if [ -n "$corpus" ]; then
  if [ ! -e "$corpus" ]; then
    echo "CORPUS=$corpus does not exist: name a folder of PDFs with 'make demo CORPUS=path/to/pdfs'." >&2
    exit 2
  fi
  paths=("$corpus")
elif [ -d "$here/../shared/corpus/seed" ]; then
  paths=("$here/../shared/corpus/seed")
else
  echo ">> no CORPUS= named and no ../shared/corpus/seed beside this clone"
  # stdout: the verified files, one a line; progress and errors go to stderr.
  if ! fetched=$("$bin/python" "$here/scripts/fetch_seed.py"); then
    exit 2
  fi
  mapfile -t paths <<<"$fetched"
fi
echo ">> ingesting ${paths[*]} into $db"
mkdir -p "$(dirname "$db")"
"$bin/truthbase" --db "$db" ingest "${paths[@]}" || echo "(some files failed; see the table above)"
"$bin/truthbase" --db "$db" docs
for q in "Which function did CSF 2.0 add?" \
         "What are the characteristics of trustworthy AI?" \
         "How does RAPTOR build its tree of summaries?" \
         "What are reflection tokens in Self-RAG?"; do
  "$bin/truthbase" --db "$db" search --k 3 "$q"
done
echo ">> serving the chat page and viewer (Ctrl-C stops)"
exec "$bin/truthbase" --db "$db" serve
