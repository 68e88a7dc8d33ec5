# Sourced by the end-to-end runs that count "N passed, M failed" (a2a-js, console): the jar,
# their npm packages, and a hub started from the jar on a free loopback port with a fresh data
# directory, stopped (and the directory removed) when the run exits. Needs $name, $here, $root,
# and scripts/jdk.sh sourced before it.
jar="${PARLEY_JAR:-$root/parley-cli/target/parley.jar}"

# e2e_fail MESSAGE: says why the run could not check anything, counts one failure, exits 1.
e2e_fail() {
  echo "$name: $1" >&2
  echo "0 passed, 1 failed"
  exit 1
}

# e2e_npm_ci: installs the run's pinned packages (package-lock.json) in $here.
e2e_npm_ci() {
  [ -f "$jar" ] || e2e_fail "$jar is missing; build it first (mvn -DskipTests package)"
  if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>npm-ci.log); then
    cat "$here/npm-ci.log" >&2
    e2e_fail "npm ci failed"
  fi
  rm -f "$here/npm-ci.log"
}

# e2e_start_hub ADMIN_TOKEN: starts the hub; sets hub_pid, url and work (the hub's log: $work/hub.err).
e2e_start_hub() {
  work="$(mktemp -d)"
  hub_pid=""
  trap e2e_stop_hub EXIT
  : >"$work/hub.out"
  local unsafe=() # as ./parley serve runs it: no JVM warning about protobuf's sun.misc.Unsafe on JDK 24+
  if [ "$PARLEY_JAVA_MAJOR" -ge 24 ]; then
    unsafe=(--sun-misc-unsafe-memory-access=allow)
  fi
  PARLEY_ADMIN_TOKEN="$1" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED "${unsafe[@]}" -jar "$jar" \
    serve --data "$work/data" --host 127.0.0.1 --port 0 >"$work/hub.out" 2>"$work/hub.err" &
  hub_pid=$!
  url=""
  for _ in $(seq 1 300); do
    url="$(sed -n 's/^parley hub listening on \(http:[^ ]*\)$/\1/p' "$work/hub.out" 2>/dev/null | head -n 1 || true)"
    [ -n "$url" ] && return 0
    if ! kill -0 "$hub_pid" 2>/dev/null; then
      cat "$work/hub.err" >&2
      e2e_fail "the hub did not start"
    fi
    sleep 0.2
  done
  e2e_fail "the hub did not report its address in time"
}

e2e_stop_hub() {
  if [ -n "$hub_pid" ]; then
    kill "$hub_pid" 2>/dev/null || true
    wait "$hub_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}

# e2e_drive SCRIPT: runs the node driver SCRIPT against the hub ($url, admin token $admin) and
# exits with its status; on a failure the hub's log follows, for the why.
e2e_drive() {
  local status
  set +e
  node "$1" "$url" "$admin"
  status=$?
  set -e
  if [ "$status" -ne 0 ]; then
    echo "$name: failures; the hub's log follows" >&2
    tail -n 50 "$work/hub.err" >&2
  fi
  exit "$status"
}
