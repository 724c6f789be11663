#!/usr/bin/env bash
# Instructions per tools/call, counted by callgrind: deterministic where CPU time on a shared
# machine is not, and it says where the instructions go. Three servers, one after the other,
# each run under `valgrind --tool=callgrind` while its peers run natively:
#   upstream       `serve --packs conformance`, called directly: its instructions per served call;
#   gateway HTTP   a gateway (`upstreams: {up: {url: ...}}`) in front of a native upstream;
#   gateway stdio  a gateway (`upstreams: {up: {command: [toolport, serve, --stdio, --packs,
#                  conformance]}}`) whose native child is the upstream.
# bench/callgrind_drive.mjs opens one MCP session, makes CALLGRIND_WARMUP sequential tools/call
# of test_simple_text on one keep-alive connection, zeroes the counters (`vgdb --pid P zero`),
# makes CALLGRIND_CALLS more and dumps (`vgdb ... dump`): the dump holds those calls only, with
# no start-up or shutdown, and its total over CALLGRIND_CALLS is the figure printed.
#
#   bench/run_gateway_callgrind.sh                 # about a minute; TOOLPORT_BIN (default build/toolport)
# Knobs (environment): CALLGRIND_CALLS (2000), CALLGRIND_WARMUP (200), CALLGRIND_TOP (25: the
#   functions listed per server, by their own instructions), CALLGRIND_OUT (a directory to keep
#   the profiles in, for callgrind_annotate [--inclusive=yes] FILE; default: removed at the end),
#   CALLGRIND_ONLY (upstream, gateway_http or gateway_stdio: measure that one alone),
#   CALLGRIND_GATEWAY_YAML (YAML appended to both gateways' configurations, e.g.
#   "pinning: {default: off}" to compare a feature on and off).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench="$root/bench"
script=run_gateway_callgrind.sh
workdir=callgrind
source "$bench/callgrind_setup.sh"

# measure NAME ARGS...: runs `toolport ARGS...` under callgrind on a fresh port (appended as
# --listen), drives it, prints instructions per call and its top functions.
measure() {
  local name=$1 port pid dump
  shift
  port=$(free_port)
  valgrind --tool=callgrind --callgrind-out-file="$out/$name.out" "$bin" "$@" --listen "127.0.0.1:$port" \
    --log-level warn 2> "$tmp/$name.log" &
  pid=$!
  pids+=("$pid")
  wait_ready "$pid" "$port" "$name" "$tmp/$name.log"
  "$NODE" "$bench/callgrind_drive.mjs" stateful "http://127.0.0.1:$port/mcp" "$tool" "$warmup" "$calls" \
    "$expected_text" "vgdb --pid=$pid zero >/dev/null" "vgdb --pid=$pid dump >/dev/null"
  dump="$out/$name.out.1"
  report "$name" "$dump"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

only=${CALLGRIND_ONLY:-}
if [[ -z "$only" || "$only" == upstream ]]; then
  measure upstream serve --packs conformance
fi
if [[ -z "$only" || "$only" == gateway_http ]]; then
  up_port=$(free_port)
  "$bin" serve --listen "127.0.0.1:$up_port" --packs conformance --log-level warn 2> "$tmp/native-upstream.log" &
  pids+=("$!")
  wait_ready "$!" "$up_port" native-upstream "$tmp/native-upstream.log"
  printf 'upstreams:\n  up:\n    url: http://127.0.0.1:%s/mcp\n%s\n' "$up_port" "${CALLGRIND_GATEWAY_YAML:-}" \
    > "$tmp/gw-http.yaml"
  measure gateway_http serve --config "$tmp/gw-http.yaml"
fi
if [[ -z "$only" || "$only" == gateway_stdio ]]; then
  printf 'upstreams:\n  up:\n    command: [%s, serve, --stdio, --packs, conformance]\n%s\n' "$bin" \
    "${CALLGRIND_GATEWAY_YAML:-}" > "$tmp/gw-stdio.yaml"
  measure gateway_stdio serve --config "$tmp/gw-stdio.yaml"
fi

echo
print_build
echo "instructions per tools/call ($tool, $calls calls after $warmup):"
for name in upstream gateway_http gateway_stdio; do
  [[ -n "${result[$name]:-}" ]] || continue
  line="  $(printf '%-14s %9d' "$name" "${result[$name]}")"
  [[ $name != upstream && -n "${result[upstream]:-}" ]] &&
    line+="  ($(awk -v g="${result[$name]}" -v u="${result[upstream]}" 'BEGIN {printf "%.2f", g / u}')x the upstream's)"
  echo "$line"
done
