#!/usr/bin/env bash
# The added latency of a webhook guard (docs/pipeline.md, Guardrail hooks): p50 of the same
# tools/call with and without a no-op local webhook guard, and the webhook's own round trip.
#
#   bench/guard_bench.sh [CALLS]        # TOOLPORT_BIN=path (default: build/toolport)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TOOLPORT_BIN:-$root/build/toolport}
[[ -x "$bin" ]] || { echo "guard_bench.sh: no toolport binary at $bin (set TOOLPORT_BIN)" >&2; exit 1; }
exec node "$root/bench/guard_bench.mjs" "$bin" "${1:-3000}"
