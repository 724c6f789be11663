#!/usr/bin/env bash
# Two builds of Toolport side by side in one run, for a change that must not cost speed (a
# refactor: "within 3 % of the previous build"). On a 2-core machine the absolute figures of
# two separate runs move by more than 3 %; here the two builds take turns, round after round,
# so a burst of load elsewhere skews one round of both rather than one build's figure.
#
#   bench/run_build_compare.sh BEFORE_BIN AFTER_BIN      # about 2 minutes with the defaults
#
# Each build serves two things, each on its own ports (all on 127.0.0.1):
#   direct   `serve --packs conformance`: tools/call of test_simple_text over Streamable HTTP
#            (what bench/run_http_bench.sh measures for Toolport);
#   gateway  a gateway of that build in front of an upstream of the same build (`upstreams:
#            {up: {url: ...}}`), the same tools/call through it (bench/run_gateway_bench.sh's
#            "gateway HTTP").
# Per round and build: wrk with BENCH_CONNECTIONS (16) connections and BENCH_THREADS (2) threads
# for BENCH_DURATION (5s) after BENCH_WARMUP (1s). Figures are medians over BENCH_ROUNDS (5):
#   calls/s, and the CPU time the serving processes spent per call (µs, from /proc: the server,
#   or the gateway plus its upstream), the steadier figure when wrk and the servers share the
#   CPUs. The ratio column is AFTER over BEFORE (calls/s: > 1 is faster; CPU/call: < 1 is cheaper).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench="$root/bench"
[[ $# -eq 2 ]] || { echo "usage: bench/run_build_compare.sh BEFORE_BIN AFTER_BIN" >&2; exit 2; }
rounds=${BENCH_ROUNDS:-5}
duration=${BENCH_DURATION:-5s}
warmup=${BENCH_WARMUP:-1s}
connections=${BENCH_CONNECTIONS:-16}
threads=${BENCH_THREADS:-2}
protocol_version=2025-11-25
die() { echo "run_build_compare.sh: $*" >&2; exit 1; }
source "$bench/bench_setup.sh"
source "$bench/mcp_session.sh"
bench_install_missing wrk curl

tmp=$(mktemp -d /tmp/toolport-compare.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

declare -A url sid cpu_pids
# Copies: a rebuild during the run must not change what is measured.
for build in before after; do
  bin="$tmp/toolport-$build"
  [[ $build == before ]] && cp "$1" "$bin" || cp "$2" "$bin"
  [[ -x "$bin" ]] || die "not an executable: $bin"
  up=$(port)
  "$bin" serve --listen "127.0.0.1:$up" --packs conformance --log-level warn 2> "$tmp/$build-upstream.log" &
  up_pid=$!; pids+=("$up_pid")
  printf 'upstreams:\n  up:\n    url: http://127.0.0.1:%s/mcp\n' "$up" > "$tmp/$build-gateway.yaml"
  gw=$(port)
  "$bin" serve --listen "127.0.0.1:$gw" --config "$tmp/$build-gateway.yaml" --log-level warn 2> "$tmp/$build-gateway.log" &
  gw_pid=$!; pids+=("$gw_pid")
  url[$build-direct]="http://127.0.0.1:$up/mcp"; cpu_pids[$build-direct]="$up_pid"
  url[$build-gateway]="http://127.0.0.1:$gw/mcp"; cpu_pids[$build-gateway]="$gw_pid $up_pid"
  for _ in $(seq 1 200); do
    curl -s --max-time 1 "http://127.0.0.1:$gw/health" | grep -q '"up":"connected' && break
    sleep 0.05
  done
  sid[$build-direct]=$(open_mcp_session "${url[$build-direct]}" "$protocol_version") || die "no session ($build direct)"
  sid[$build-gateway]=$(open_mcp_session "${url[$build-gateway]}" "$protocol_version") || die "no session ($build gateway)"
done

run() {  # NAME: one measured wrk run; appends "calls/s cpu-us-per-call" to $tmp/NAME.txt
  local name=$1 before=0 after=0 p out
  MCP_SESSION_ID="${sid[$name]}" wrk -t"$threads" -c"$connections" -d"$warmup" -s "$bench/mcp_call.lua" "${url[$name]}" >/dev/null
  for p in ${cpu_pids[$name]}; do before=$((before + $(ticks "$p"))); done
  out=$(MCP_SESSION_ID="${sid[$name]}" wrk -t"$threads" -c"$connections" -d"$duration" -s "$bench/mcp_call.lua" "${url[$name]}")
  for p in ${cpu_pids[$name]}; do after=$((after + $(ticks "$p"))); done
  if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then die "$name: $(grep -E 'Non-2xx|Socket errors' <<<"$out")"; fi
  awk -v t=$((after - before)) -v hz="$hz" '/requests in/ {n = $1} /^Requests\/sec:/ {r = $2}
    END {printf "%.0f %.1f\n", r, t * 1e6 / hz / n}' <<<"$out" >> "$tmp/$name.txt"
}

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "before: $1"
echo "after:  $2"
for round in $(seq 1 "$rounds"); do
  # Alternate which build goes first, so neither always runs on a warmer machine.
  if (( round % 2 )); then order=(before after); else order=(after before); fi
  for what in direct gateway; do
    for build in "${order[@]}"; do run "$build-$what"; done
  done
  echo "round $round of $rounds done"
done

printf '\n%-8s %-12s %12s %12s %8s\n' what figure before after ratio
for what in direct gateway; do
  for col in 1 2; do
    b=$(cut -d' ' -f$col "$tmp/before-$what.txt" | median)
    a=$(cut -d' ' -f$col "$tmp/after-$what.txt" | median)
    [[ $col == 1 ]] && figure="calls/s" || figure="cpu us/call"
    printf '%-8s %-12s %12s %12s %8.3f\n' "$what" "$figure" "$b" "$a" "$(awk -v a="$a" -v b="$b" 'BEGIN {print a / b}')"
  done
done
