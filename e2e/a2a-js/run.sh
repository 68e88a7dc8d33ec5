#!/usr/bin/env bash
# End-to-end check of the hub's A2A surface with the official A2A JavaScript SDK
# (@a2a-js/sdk, pinned in package-lock.json; A2A v1.0 over JSON-RPC and HTTP+JSON, and the
# SDK's 0.3.14 release under the alias a2a-js-sdk-v03 for A2A 0.3 streams and their refusals):
# starts a hub from the distribution jar on a free loopback port with a fresh data directory,
# creates nodes, runs a2a.mjs (send, stream, get, list, subscribe, cancel, push configs, ACL),
# and stops the hub. Closing line: "N passed, M failed"; exit 1 when any failed or none ran.
set -euo pipefail
name=a2a-js
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$root/scripts/jdk.sh"
. "$root/e2e/hub.sh"
e2e_npm_ci
admin="pa_a2a-e2e-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
e2e_start_hub "$admin"

echo "a2a-js: @a2a-js/sdk $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$here/node_modules/@a2a-js/sdk/package.json" \
  | head -n 1) against $url"
e2e_drive "$here/a2a.mjs"
