#!/usr/bin/env bash
# What watching every call costs: tools/call throughput with tracing exported (every request
# sampled, OTLP/HTTP to a local collector), with the audit log on, and with both off, measured
# side by side in one run; optionally against an older build to show that off costs nothing.
#
#   bench/run_observability_bench.sh
#   BENCH_BASELINE_BIN=/path/to/older/toolport bench/run_observability_bench.sh
#
# Servers (conformance pack, one session each, the same wrk load: bench/mcp_call.lua):
#   off      neither tracing nor an audit log
#   traced   OTEL_EXPORTER_OTLP_ENDPOINT to nginx answering 200 at /v1/traces (a collector
#            that costs nothing), OTEL_TRACES_SAMPLER=always_on: a SERVER span per call
#   audit    `audit: {enabled: true}` (a JSONL file in the run's temporary directory, default
#            flush), when the binary knows the audit section (the others run with it off)
#   baseline BENCH_BASELINE_BIN, when set: the same as off, on that binary
# Each round runs every server once, in turn; the ratio of each to off per round and their
# median are printed, and after the run the exporter's counts from /metrics (spans exported,
# dropped). Issue 32's targets: traced/off >= 0.85, audit/off >= 0.90, off/baseline >= 0.99.
# Knobs: BENCH_DURATION=10s BENCH_CONNECTIONS=16 BENCH_THREADS=2 BENCH_WARMUP=2s BENCH_ROUNDS=3
#        TOOLPORT_BIN=path (default build-bench/toolport, built if missing)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench="$root/bench"
source "$bench/mcp_session.sh"
source "$bench/nginx_conf.sh"
rounds=${BENCH_ROUNDS:-3}
version=2025-11-25

die() { echo "run_observability_bench.sh: $*" >&2; exit 1; }
source "$bench/bench_setup.sh"
bench_install_missing wrk curl nginx
bench_node_modules
bench_toolport_bin
bench_wrk_knobs
bench_workdir observability-bench

# The collector: nginx taking every export with 200 and an empty body (an empty
# ExportTraceServiceResponse: everything accepted).
collector_port=$(free_port)
write_nginx_conf "$tmp/nginx" 1 <<CONF
server { listen 127.0.0.1:$collector_port; location /v1/traces { return 200 ''; } }
CONF
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" &
pids+=($!)

# The OTEL_* variables of the caller must not reach the servers.
clean_env=(env)
while IFS='=' read -r name _; do [[ $name == OTEL_* ]] && clean_env+=(-u "$name"); done < <(env)

servers=(off traced)
declare -A url sid
start() {  # start NAME BINARY CONFIG-TEXT [ENV...]
  local name=$1 binary=$2 config=$3 port
  shift 3
  port=$(free_port)
  printf 'log:\n  level: info\n%s' "$config" > "$tmp/$name.yaml"
  "${clean_env[@]}" "$@" "$binary" serve --listen "127.0.0.1:$port" --packs conformance --config "$tmp/$name.yaml" \
    2> "$tmp/$name.log" &
  pids+=($!)
  wait_healthy "$port"
  url[$name]=http://127.0.0.1:$port/mcp
  sid[$name]=$(open_mcp_session "${url[$name]}" "$version")
}
# The audit log is on by default where the binary has one: off everywhere but on `audit`.
no_audit=''
printf 'audit:\n  enabled: false\n' > "$tmp/probe.yaml"
if "$TOOLPORT_BIN" config check "$tmp/probe.yaml" >/dev/null 2>&1; then no_audit=$'audit:\n  enabled: false\n'; fi
start off "$TOOLPORT_BIN" "$no_audit"
start traced "$TOOLPORT_BIN" "$no_audit" OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$collector_port" \
  OTEL_TRACES_SAMPLER=always_on OTEL_SERVICE_NAME=bench
grep -q "exporting traces" "$tmp/traced.log" || die "the traced server does not say it exports: $(cat "$tmp/traced.log")"
if [[ -n "$no_audit" ]]; then
  start audit "$TOOLPORT_BIN" "$(printf 'audit:\n  enabled: true\n  path: %s/audit.jsonl\n' "$tmp")"
  servers+=(audit)
fi
if [[ -n "${BENCH_BASELINE_BIN:-}" ]]; then
  start baseline "$BENCH_BASELINE_BIN" ''
  servers+=(baseline)
fi

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2); wrk -t$threads -c$connections -d$duration"
echo "toolport: $TOOLPORT_BIN${BENCH_BASELINE_BIN:+; baseline: $BENCH_BASELINE_BIN}"

run_wrk() {  # NAME ROUND: leaves $tmp/wrk-NAME-ROUND.txt
  MCP_SESSION_ID="${sid[$1]}" wrk -t"$threads" -c"$connections" -d"$warmup" -s "$bench/mcp_call.lua" "${url[$1]}" >/dev/null
  MCP_SESSION_ID="${sid[$1]}" wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$bench/mcp_call.lua" \
    "${url[$1]}" > "$tmp/wrk-$1-$2.txt"
  awk '/Non-2xx or 3xx responses:/ {bad = $NF} END {exit bad > 0}' "$tmp/wrk-$1-$2.txt" || die "$1: non-2xx answers"
}
rps() { awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk-$1-$2.txt"; }
p99() { awk '$1 == "99%" {print $2}' "$tmp/wrk-$1-$2.txt"; }
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

declare -A ratios
for round in $(seq 1 "$rounds"); do
  line="round $round:"
  for name in "${servers[@]}"; do
    run_wrk "$name" "$round"
    line+=$(printf '  %s %8.0f req/s (p99 %s)' "$name" "$(rps "$name" "$round")" "$(p99 "$name" "$round")")
  done
  echo "$line"
  for name in "${servers[@]}"; do
    [[ $name == off ]] && continue
    if [[ $name == baseline ]]; then
      ratios[$name]+="$(awk -v a="$(rps off "$round")" -v b="$(rps baseline "$round")" 'BEGIN { printf "%.3f", a / b }') "
    else
      ratios[$name]+="$(awk -v a="$(rps "$name" "$round")" -v b="$(rps off "$round")" 'BEGIN { printf "%.3f", a / b }') "
    fi
  done
done

echo
for name in "${servers[@]}"; do
  case $name in
    traced) label="traced / off (target >= 0.85)" ;;
    audit) label="audit / off (target >= 0.90)" ;;
    baseline) label="off / baseline (target >= 0.99)" ;;
    *) continue ;;
  esac
  printf '%-34s median %s   rounds: %s\n' "$label" "$(tr ' ' '\n' <<<"${ratios[$name]}" | grep . | median)" "${ratios[$name]}"
done
metrics=$(curl -s "${url[traced]%/mcp}/metrics")
echo "traced server's exporter: $(grep -E '^toolport_trace_spans_(exported|dropped)_total' <<<"$metrics" | tr '\n' ' ')"
