#!/usr/bin/env bash
# The viewer's npm packages (pdfjs-dist; swagger-ui-dist for /docs) in src/truthbase/web/node_modules:
# inside the package, so that a built wheel carries the files the app serves (the package-data
# globs of pyproject.toml pick them; node_modules itself stays out of git). Idempotent: a no-op
# when the installed tree already matches the package-lock.json. No bundler: FastAPI serves
# pdf.js's built ES modules (build/pdf.mjs, build/pdf.worker.mjs) from node_modules.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
web="$here/src/truthbase/web"
marker="$web/node_modules/.package-lock.json"
if [ -f "$web/node_modules/pdfjs-dist/build/pdf.mjs" ] \
   && [ -f "$web/node_modules/swagger-ui-dist/swagger-ui-bundle.js" ] && [ -f "$marker" ] \
   && [ "$marker" -nt "$web/package-lock.json" ] && [ "$marker" -nt "$web/package.json" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo ">> npm is missing: install Node.js 20+ and npm, then run scripts/install-web.sh" >&2
  exit 1
fi
echo ">> installing the viewer's npm packages (pdfjs-dist) into src/truthbase/web/node_modules"
cd "$web"
# --omit=optional: pdfjs-dist's optional @napi-rs/canvas is only for rendering under Node.
npm ci --omit=optional --no-audit --no-fund --loglevel=error
touch "$marker"
