#!/usr/bin/env bash
# Runs the browser tests against a real shed: starts `shed up` on a fresh data
# folder at a free loopback port (public URL http://localhost:<port>, so the
# run club lives at http://demo.localhost:<port>/runs/), takes the token and
# the one-time sign-in link it prints and another link from `shed login you`,
# runs `npm test` with SHED_URL, SHED_TOKEN, SHED_UP_SIGN_IN_URL and
# SHED_LOGIN_URL set (and SHED_BIN and SHED_DATA, for tests that run the CLI
# on the same data folder), and stops
# the server however the tests end.
#
#   tests/browser/against-shed.sh [path/to/shed] [file.test.mjs ...]
#
# With test files named, only those run (node --test on them); else npm test.
# The shed binary: the argument, else $SHED_BIN, else the debug build under
# $CARGO_TARGET_DIR (default target/). Run tests/browser/install.sh first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
shed="${1:-${SHED_BIN:-${CARGO_TARGET_DIR:-$repo/target}/debug/shed}}"
shift || true
[ -x "$shed" ] || { echo "no shed binary at $shed — run cargo build -p shed, or pass its path" >&2; exit 1; }

data="$(mktemp -d)"
log="$data/shed.log"
server=""
stop() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap stop EXIT

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
url="http://localhost:$port"
"$shed" up --data "$data/shed-data" --listen "127.0.0.1:$port" --public-url "$url" >"$data/up.txt" 2>"$log" &
server=$!

for _ in $(seq 1 300); do
  grep -q '^Token:' "$data/up.txt" 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || { echo "shed up stopped:" >&2; cat "$log" >&2; exit 1; }
  sleep 0.1
done
token="$(sed -n 's/^Token: *//p' "$data/up.txt")"
[ -n "$token" ] || { echo "shed up printed no token:" >&2; cat "$data/up.txt" "$log" >&2; exit 1; }
up_sign_in="$(sed -n 's/^Sign in: *//p' "$data/up.txt")"
login="$("$shed" login you --data "$data/shed-data" --public-url "$url" 2>/dev/null)"

echo "==> browser tests against shed at $url"
cd "$here"
export SHED_URL="$url" SHED_TOKEN="$token" SHED_UP_SIGN_IN_URL="$up_sign_in" SHED_LOGIN_URL="$login" SHED_BIN="$shed" SHED_DATA="$data/shed-data"
if [ "$#" -gt 0 ]; then
  node --test --test-concurrency=1 "$@"
else
  npm test
fi
