#!/usr/bin/env bash
# System packages for the browser tests: Debian's Chromium at /usr/bin/chromium.
# Idempotent; never downloads a browser any other way (no `playwright install`).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo ">> /usr/bin/chromium is missing and this is not root: skipping." >&2
  echo "   Install it with: sudo apt-get install -y chromium (the browser tests skip without it)" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo ">> /usr/bin/chromium is missing and there is no apt-get: install Chromium yourself." >&2
  exit 0
fi
echo ">> installing chromium (apt) for the browser tests"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends chromium >/dev/null
echo ">> chromium: $(/usr/bin/chromium --version 2>/dev/null || echo installed)"
