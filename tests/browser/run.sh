#!/usr/bin/env bash
# Browser tests: the userscript on the real 2048 and the playground page, in headless Debian chromium, against a
# real `advisor2048 serve`.
#
#   bash tests/browser/run.sh                 # uses target/release/advisor2048 (build it first)
#   ADVISOR_BIN=/path/to/advisor2048 bash tests/browser/run.sh
#
# Installs what it needs (Debian's chromium when /usr/bin/chromium is missing, then `npm ci` here), starts the server
# on a free 127.0.0.1 port, waits for GET /healthz, runs every *.test.js with node's test runner, stops the server,
# and ends with the line "N passed, N failed". Exit status 0 only when every test passed.
# Screenshots, the server log and the TAP output go to tests/browser/artifacts/.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
ADVISOR_BIN="${ADVISOR_BIN:-target/release/advisor2048}"
case "$ADVISOR_BIN" in /*) ;; *) ADVISOR_BIN="$REPO/$ADVISOR_BIN" ;; esac
ARTIFACTS="$HERE/artifacts"

setup_failed() {
  echo "browser tests: $*" >&2
  echo "0 passed, 1 failed"
  exit 1
}

# --- what the tests need -------------------------------------------------------------------------------------------
if [ ! -x /usr/bin/chromium ]; then
  echo "installing Debian's chromium"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } || setup_failed "cannot install chromium"
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "installing node and npm"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null; } || setup_failed "cannot install node"
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || setup_failed "node $(node --version) is too old: playwright-core needs node 20 or newer"
(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) || setup_failed "npm ci failed in $HERE"
[ -x "$ADVISOR_BIN" ] || setup_failed "no server binary at $ADVISOR_BIN (cargo build --release, or set ADVISOR_BIN)"

rm -rf "$ARTIFACTS"
mkdir -p "$ARTIFACTS"

# --- the real server -----------------------------------------------------------------------------------------------
PORT="$(node "$HERE/free-port.js")"
ADVISOR_URL="http://127.0.0.1:$PORT"
"$ADVISOR_BIN" serve --listen "127.0.0.1:$PORT" >"$ARTIFACTS/server.log" 2>&1 &
SERVER_PID=$!
stop_server() {
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null
  fi
  wait "$SERVER_PID" 2>/dev/null
}
trap stop_server EXIT
if ! node "$HERE/wait-healthz.js" "$ADVISOR_URL" "$SERVER_PID" 60; then
  tail -n 30 "$ARTIFACTS/server.log" >&2
  setup_failed "the server did not come up"
fi

# --- the tests, one file at a time (the machine is small; each test drives one browser) ----------------------------
passed=0
failed=0
status=0
for file in "$HERE"/*.test.js; do
  name="$(basename "$file" .test.js)"
  tap="$ARTIFACTS/$name.tap"
  (cd "$HERE" && ADVISOR_URL="$ADVISOR_URL" node --test \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" \
    "$file")
  rc=$?
  p="$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tap" | tail -n 1)"
  f="$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tap" | tail -n 1)"
  c="$(sed -n 's/^# cancelled \([0-9]*\)$/\1/p' "$tap" | tail -n 1)"
  p="${p:-0}"
  f=$(( ${f:-0} + ${c:-0} ))
  # A file that failed without a failing test (it crashed, or a hook failed) still counts as a failure.
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  passed=$((passed + p))
  failed=$((failed + f))
  [ "$rc" -eq 0 ] || status=1
done

stop_server
trap - EXIT
if ! grep -q . "$ARTIFACTS/server.log"; then rm -f "$ARTIFACTS/server.log"; fi
echo "screenshots and logs: $ARTIFACTS"
[ "$failed" -eq 0 ] || status=1
echo "$passed passed, $failed failed"
exit "$status"
