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
#   tests/browser/against-shed.sh --two-servers [path/to/shed]
#
# --two-servers: only live-two-servers.test.mjs, on PostgreSQL — `shed up` on
# a new database on the server SHED_TEST_DATABASE names (scripts/postgres-cluster
# sets it; scripts/test-on-postgres runs this), then a second `shed serve` on
# the same database at another port (its own data folder), with
# SHED_SECOND_URL and SHED_SECOND_LOGIN_URL (a `shed login you` link of its
# own) set besides. Without SHED_TEST_DATABASE it says it is skipped.
#
# With test files named, only those run (node --test on them); else npm test.
# The shed binary: the argument, else $SHED_BIN, else the debug build under
# $CARGO_TARGET_DIR (default target/). Run tests/browser/install.sh first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
two=""
if [ "${1:-}" = "--two-servers" ]; then two=yes; shift; fi
shed="${1:-${SHED_BIN:-${CARGO_TARGET_DIR:-$repo/target}/debug/shed}}"
shift || true
[ -x "$shed" ] || { echo "no shed binary at $shed — run cargo build -p shed, or pass its path" >&2; exit 1; }
if [ -n "$two" ] && [ -z "${SHED_TEST_DATABASE:-}" ]; then
  echo "==> browser test on two servers skipped: two servers share a database only on PostgreSQL — run it under scripts/postgres-cluster (SHED_TEST_DATABASE)"
  exit 0
fi

data="$(mktemp -d)"
log="$data/shed.log"
server=""
second=""
database=""
stop() {
  for pid in $second $server; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  if [ -n "$database" ]; then psql "$SHED_TEST_DATABASE" -qc "DROP DATABASE IF EXISTS $database" >/dev/null || true; fi
  rm -rf "$data"
}
trap stop EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port="$(free_port)"
url="http://localhost:$port"
on=()
if [ -n "$two" ]; then
  # A new database of its own on the cluster's server, as tests/conftest.py makes one.
  database="shed_browser_$$"
  psql "$SHED_TEST_DATABASE" -qc "CREATE DATABASE $database"
  on=(--database "${SHED_TEST_DATABASE%/*}/$database")
fi
"$shed" up --data "$data/shed-data" "${on[@]}" --listen "127.0.0.1:$port" --public-url "$url" >"$data/up.txt" 2>"$log" &
server=$!

for _ in $(seq 1 300); do
  grep -q '^Token:' "$data/up.txt" 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || { echo "shed up stopped:" >&2; cat "$log" >&2; exit 1; }
  sleep 0.1
done
token="$(sed -n 's/^Token: *//p' "$data/up.txt")"
[ -n "$token" ] || { echo "shed up printed no token:" >&2; cat "$data/up.txt" "$log" >&2; exit 1; }
up_sign_in="$(sed -n 's/^Sign in: *//p' "$data/up.txt")"
login="$("$shed" login you --data "$data/shed-data" "${on[@]}" --public-url "$url" 2>/dev/null)"
export SHED_URL="$url" SHED_TOKEN="$token" SHED_UP_SIGN_IN_URL="$up_sign_in" SHED_LOGIN_URL="$login" SHED_BIN="$shed" SHED_DATA="$data/shed-data"

if [ -z "$two" ]; then
  echo "==> browser tests against shed at $url"
  cd "$here"
  if [ "$#" -gt 0 ]; then
    node --test --test-concurrency=1 "$@"
  else
    npm test
  fi
  exit
fi

port2="$(free_port)"
url2="http://localhost:$port2"
"$shed" serve --data "$data/second-data" "${on[@]}" --listen "127.0.0.1:$port2" --public-url "$url2" >/dev/null 2>"$data/second.log" &
second=$!
for _ in $(seq 1 300); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port2") 2>/dev/null && break
  kill -0 "$second" 2>/dev/null || { echo "the second shed serve stopped:" >&2; cat "$data/second.log" >&2; exit 1; }
  sleep 0.1
done
login2="$("$shed" login you --data "$data/second-data" "${on[@]}" --public-url "$url2" 2>/dev/null)"

echo "==> browser test on two servers sharing PostgreSQL: $url and $url2"
cd "$here"
SHED_SECOND_URL="$url2" SHED_SECOND_LOGIN_URL="$login2" node --test live-two-servers.test.mjs
