#!/bin/sh
# An agent in shell that speaks the agent protocol (docs/agents.md) with curl and jq: run it
# as a managed agent (runner: process), which gives it PARLEY_URL and PARLEY_TOKEN, or on its
# own with both set. For each envelope of its inbox that is not settled, it claims it, runs
# the command it was given with the envelope's text on stdin, heartbeating while that runs,
# and replies with the command's output (an empty output acks it processed; a failing
# command acks it failed).
#
#   command: [sh, examples/agents/shell-agent.sh, tr, a-z, A-Z]
set -u
: "${PARLEY_URL:?PARLEY_URL is not set}" "${PARLEY_TOKEN:?PARLEY_TOKEN is not set}"
[ $# -gt 0 ] || { echo "usage: shell-agent.sh COMMAND [ARG...]" >&2; exit 2; }
HEARTBEAT_SECONDS=${HEARTBEAT_SECONDS:-20}
TIMEOUT_MS=${TIMEOUT_MS:-600000}

api() { # api PATH [curl args...]: a POST to the hub as this agent; prints the HTTP status
    path=$1; shift
    curl -sS -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $PARLEY_TOKEN" \
        -H 'Content-Type: application/json' "$@" "$PARLEY_URL$path"
}

# Replay what is not settled, then go on live; an envelope whose claim was taken back comes again.
curl -sS -N -H "Authorization: Bearer $PARLEY_TOKEN" "$PARLEY_URL/v1/inbox/stream?replay=unacked" |
while IFS= read -r line; do
    case $line in data:*) ;; *) continue ;; esac
    envelope=${line#data:}
    id=$(printf '%s' "$envelope" | jq -r .id)
    if [ "$(printf '%s' "$envelope" | jq -r .from)" = parley ]; then # the hub's notices: noted, not worked on
        echo "hub notice: $(printf '%s' "$envelope" | jq -r '.text // ""')" >&2
        api "/v1/messages/$id/ack" -d '{"status":"processed"}' >/dev/null
        continue
    fi
    for wait in 1 2 4 8 0; do # a hub that fails or cannot be reached is asked again
        status=$(api "/v1/messages/$id/claim" -d "{\"timeoutMs\":$TIMEOUT_MS}")
        case $status in 5??|000|429) [ "$wait" = 0 ] || sleep "$wait" ;; *) break ;; esac
    done
    if [ "$status" != 200 ]; then # settled already, or waiting out a backoff: it is delivered again then
        echo "envelope $id not claimed (HTTP $status)" >&2
        continue
    fi
    api "/v1/messages/$id/heartbeat" -d "$(jq -nc --arg tool "$1" '{tool: $tool}')" >/dev/null
    (while sleep "$HEARTBEAT_SECONDS"; do api "/v1/messages/$id/heartbeat" >/dev/null; done) &
    beating=$!
    # The command reads text from others: it must not act as this node with its token.
    if out=$(printf '%s' "$envelope" | jq -j '.text // (.data | tostring)' | env -u PARLEY_TOKEN "$@"); then
        if [ -n "$out" ]; then
            status=$(printf '%s' "$out" | jq -Rsc '{text: .}' | api "/v1/messages/$id/reply" -d @-)
            case $status in
                2??|5??|000) ;; # answered, or the hub failing: the claim is taken back and the envelope comes again
                *) api "/v1/messages/$id/ack" -d "{\"status\":\"failed\",\"reason\":\"the reply was refused (HTTP $status)\"}" >/dev/null ;;
            esac
        else
            api "/v1/messages/$id/ack" -d '{"status":"processed"}' >/dev/null
        fi
    else
        api "/v1/messages/$id/ack" -d "{\"status\":\"failed\",\"reason\":\"the command exited with status $?\"}" >/dev/null
    fi
    kill "$beating" 2>/dev/null
done
