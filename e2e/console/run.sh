#!/usr/bin/env bash
# End-to-end check of the operator console (/console) in headless Chromium (Debian's
# `chromium`, driven by playwright-core; axe-core for accessibility; both pinned in
# package-lock.json): starts a hub from the distribution jar on a free loopback port with a
# fresh data directory, runs console.mjs (log in, topology, live flow, dead-letter redrive, a
# node token's view, keyboard, axe, CSP), and stops the hub. Screenshots go to artifacts/
# (ignored by git). Closing line: "N passed, M failed"; exit 1 when any failed or none ran.
# Without a Chromium (CHROMIUM, else /usr/bin/chromium) it says so and exits 0: skipped.
set -euo pipefail
name=console
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$root/scripts/jdk.sh"
. "$root/e2e/hub.sh"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM" ]; then
  echo "console: no Chromium at $CHROMIUM (apt-get install chromium); the console checks are skipped" >&2
  exit 0
fi
e2e_npm_ci
admin="pa_console-e2e-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
e2e_start_hub "$admin"

echo "console: $("$CHROMIUM" --version 2>/dev/null | head -n 1) against $url"
e2e_drive "$here/console.mjs"
