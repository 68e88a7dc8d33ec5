#!/usr/bin/env bash
# End-to-end check of the hub's A2A surface with the official A2A JavaScript SDK
# (@a2a-js/sdk, pinned in package-lock.json; A2A v1.0 over JSON-RPC and HTTP+JSON, and the
# SDK's 0.3.14 release under the alias a2a-js-sdk-v03 for A2A 0.3 streams and their refusals):
# starts a hub from the distribution jar on a free loopback port with a fresh data directory,
# creates nodes, runs a2a.mjs (send, stream, get, list, subscribe, cancel, push configs, ACL),
# and stops the hub. Closing line: "N passed, M failed"; exit 1 when any failed or none ran.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$root/scripts/jdk.sh"
jar="${PARLEY_JAR:-$root/parley-cli/target/parley.jar}"
if [ ! -f "$jar" ]; then
  echo "a2a-js: $jar is missing; build it first (mvn -DskipTests package)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

cd "$here"
if ! npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>npm-ci.log; then
  cat npm-ci.log >&2
  echo "a2a-js: npm ci failed" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
rm -f npm-ci.log

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

: >"$work/hub.out"
admin="pa_a2a-e2e-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
PARLEY_ADMIN_TOKEN="$admin" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -jar "$jar" \
  serve --data "$work/data" --host 127.0.0.1 --port 0 >"$work/hub.out" 2>"$work/hub.err" &
hub_pid=$!
url=""
for _ in $(seq 1 300); do
  url="$(sed -n 's/^parley hub listening on \(http:[^ ]*\)$/\1/p' "$work/hub.out" 2>/dev/null | head -n 1 || true)"
  [ -n "$url" ] && break
  if ! kill -0 "$hub_pid" 2>/dev/null; then
    cat "$work/hub.err" >&2
    echo "a2a-js: the hub did not start" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
  sleep 0.2
done
if [ -z "$url" ]; then
  echo "a2a-js: the hub did not report its address in time" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

echo "a2a-js: @a2a-js/sdk $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$here/node_modules/@a2a-js/sdk/package.json" \
  | head -n 1) against $url"
set +e
node "$here/a2a.mjs" "$url" "$admin"
status=$?
set -e
if [ "$status" -ne 0 ]; then
  echo "a2a-js: failures; the hub's log follows" >&2
  tail -n 50 "$work/hub.err" >&2
fi
exit "$status"
