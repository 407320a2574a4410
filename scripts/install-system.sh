#!/usr/bin/env bash
# System packages (Debian apt), in parts:
#   ocr       Tesseract 5 with English and German models, for OCR of scanned pages (make demo and
#             make test: users ingest scans). The Python binding (tesserocr, a wheel from PyPI)
#             bundles its own libtesseract but reads the language models from tesseract-ocr-*.
#   chromium  Debian's Chromium at /usr/bin/chromium, for the browser tests and the viewer bench.
# No part named: both. Idempotent (a part whose files are there is skipped); never downloads a
# browser any other way (no `playwright install`). Not root or no apt-get: says what to install.
set -euo pipefail
parts=("$@")
if [ ${#parts[@]} -eq 0 ]; then
  parts=(ocr chromium)
fi

# What each part needs, and the file that shows it is installed.
need_packages=()
for part in "${parts[@]}"; do
  case "$part" in
    ocr)
      # tesserocr's wheel looks for models in /usr/share/tesseract-ocr/5/tessdata (Debian's path).
      for lang in eng deu; do
        if [ ! -f "/usr/share/tesseract-ocr/5/tessdata/$lang.traineddata" ]; then
          need_packages+=("tesseract-ocr-$lang")
        fi
      done
      if ! command -v tesseract >/dev/null 2>&1; then
        need_packages+=(tesseract-ocr)
      fi
      ;;
    chromium)
      if [ ! -x /usr/bin/chromium ]; then
        need_packages+=(chromium)
      fi
      ;;
    *)
      echo "install-system.sh: unknown part '$part' (ocr, chromium)" >&2
      exit 2
      ;;
  esac
done
if [ ${#need_packages[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo ">> missing system packages and this is not root: skipping." >&2
  echo "   Install them with: sudo apt-get install -y ${need_packages[*]}" >&2
  echo "   (without chromium the browser tests skip; without tesseract scanned pages fail with" >&2
  echo "   no_text and the OCR tests skip)" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo ">> missing system packages and there is no apt-get: install ${need_packages[*]} yourself." >&2
  exit 0
fi
echo ">> installing ${need_packages[*]} (apt)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need_packages[@]}" >/dev/null
for pkg in "${need_packages[@]}"; do
  case "$pkg" in
    chromium) echo ">> chromium: $(/usr/bin/chromium --version 2>/dev/null || echo installed)" ;;
    tesseract-ocr) echo ">> $(tesseract --version 2>&1 | head -n 1)" ;;
  esac
done
