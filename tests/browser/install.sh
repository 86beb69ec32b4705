#!/usr/bin/env bash
# Installs what the browser tests need, only what is missing:
#   - Debian's chromium at /usr/bin/chromium (apt-get; needs root, as on our machines);
#   - tests/browser/node_modules from package-lock.json (npm ci), when missing or
#     older than the lock or package.json.
# Safe to run again and again; quiet apart from one line per step it takes.
set -euo pipefail
cd "$(dirname "$0")"

say() { printf '==> %s\n' "$*"; }

if [ ! -x /usr/bin/chromium ]; then
  say "installing Debian's chromium (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
  [ -x /usr/bin/chromium ] || { echo "apt-get finished but /usr/bin/chromium is still missing" >&2; exit 1; }
fi

# node_modules/.package-lock.json is npm's record of the last install.
stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  say "installing the browser tests' npm packages (npm ci in tests/browser)"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
