#!/usr/bin/env bash
# Stops the Swift servers start-swift.sh started, by the pids it recorded.
set -uo pipefail
dir=${SWIFT_DIR:-/tmp/switchyard-swift}
for pidfile in "$dir"/run/*.pid; do
  [ -f "$pidfile" ] || continue
  kill "$(cat "$pidfile")" 2>/dev/null || true
  rm -f "$pidfile"
done
