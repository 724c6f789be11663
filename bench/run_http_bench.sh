#!/usr/bin/env bash
# HTTP benchmark: Toolport vs the official MCP TypeScript SDK vs nginx, side by side, in one run.
#
#   bench/run_http_bench.sh
#
# Every server listens on 127.0.0.1 only and is stopped before the script exits. What is
# measured, and why, is in bench/README.md. Knobs (environment):
#   BENCH_DURATION=10s  BENCH_CONNECTIONS=16  BENCH_THREADS=2   wrk settings per server
#   BENCH_WARMUP=2s     unrecorded wrk run before each measured one (JIT, caches)
#   BENCH_SESSIONS=10000  sessions opened for the memory-per-session figure (0 skips it)
#   TOOLPORT_BIN=path   binary to measure (default: build-bench/toolport, built if missing)
#   BENCH_TOOLPORT_YAML=text  appended to Toolport's configuration (compare a feature on and
#                       off, e.g. "pipeline: {redact: {results: [all]}}")
#   BENCH_PIN=1         each server on CPU 0 only, wrk on the other CPUs (see bench/README.md:
#                       unpinned, the scheduler sometimes puts a wrk thread on the server's
#                       core for a whole run, and every server's p99 then reads 2-4 ms)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench="$root/bench"
source "$bench/nginx_conf.sh"
duration=${BENCH_DURATION:-10s}
connections=${BENCH_CONNECTIONS:-16}
threads=${BENCH_THREADS:-2}
warmup=${BENCH_WARMUP:-2s}
sessions=${BENCH_SESSIONS:-10000}
protocol_version=2025-11-25
pin_server=() pin_load=() placement="unpinned" nginx_workers=auto
if [[ "${BENCH_PIN:-0}" == 1 ]]; then
  (( $(nproc) >= 2 )) || { echo "run_http_bench.sh: BENCH_PIN=1 needs 2 CPUs" >&2; exit 1; }
  pin_server=(taskset -c 0) pin_load=(taskset -c "1-$(( $(nproc) - 1 ))")
  placement="pinned: servers on CPU 0, wrk on CPUs 1-$(( $(nproc) - 1 ))"
  nginx_workers=1  # one per CPU it may use: two workers sharing one CPU only add latency
fi

say() { printf '\n=== %s ===\n' "$*"; }
die() { echo "run_http_bench.sh: $*" >&2; exit 1; }

# ------------------------------------------------------------------ dependencies
source "$bench/bench_setup.sh"
bench_install_missing wrk nginx curl
bench_node_modules
bench_toolport_bin

# ------------------------------------------------------------------ process handling
tmp=$(mktemp -d /tmp/toolport-bench.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stop() {  # stop PID: one of ours, by its id
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  local p kept=()
  for p in "${pids[@]}"; do [[ "$p" == "$1" ]] || kept+=("$p"); done
  pids=(${kept[@]+"${kept[@]}"})
}

wait_port() {  # wait_port PID PORT: until something answers HTTP on 127.0.0.1:PORT
  local i
  for i in $(seq 1 100); do
    kill -0 "$1" 2>/dev/null || die "the server (pid $1) exited during start-up"
    curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$2/" && return 0
    sleep 0.05
  done
  die "nothing answered on 127.0.0.1:$2"
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# mcp_session URL: initialize + notifications/initialized; prints the session id.
mcp_session() {
  local url=$1 sid code
  curl -sS --max-time 5 -D "$tmp/init.headers" -o "$tmp/init.body" -X POST "$url" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    --data "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"$protocol_version\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}"
  sid=$(awk 'tolower($1) == "mcp-session-id:" {print $2}' "$tmp/init.headers" | tr -d '\r')
  [[ -n "$sid" ]] || die "initialize at $url returned no Mcp-Session-Id: $(head -c 300 "$tmp/init.body")"
  code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -X POST "$url" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: $protocol_version" \
    --data '{"jsonrpc":"2.0","method":"notifications/initialized"}')
  [[ "$code" == 202 ]] || die "notifications/initialized at $url answered HTTP $code"
  echo "$sid"
}

# mcp_call URL SID: one tools/call of test_simple_text (id 1); prints the response body.
mcp_call() {
  curl -sS --max-time 5 -X POST "$1" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Mcp-Session-Id: $2" -H "MCP-Protocol-Version: $protocol_version" \
    --data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}'
}

expected_text="This is a simple text response for testing."

# run_wrk NAME URL SID: warm-up, then the measured run; leaves $tmp/wrk-NAME.txt
run_wrk() {
  local name=$1 url=$2 sid=$3
  MCP_SESSION_ID="$sid" "${pin_load[@]}" wrk -t"$threads" -c"$connections" -d"$warmup" -s "$bench/mcp_call.lua" "$url" >/dev/null
  MCP_SESSION_ID="$sid" "${pin_load[@]}" wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$bench/mcp_call.lua" "$url" \
    > "$tmp/wrk-$name.txt"
  sed 's/^/    /' "$tmp/wrk-$name.txt"
}

# Figures from a wrk report: requests/s, p50 and p99 in ms, non-2xx count, socket errors.
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u);
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000;
    printf "%.3f", n }'
}
wrk_rps() { awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk-$1.txt"; }
wrk_pct() { to_ms "$(awk -v p="$2%" '$1 == p {print $2}' "$tmp/wrk-$1.txt")"; }
wrk_non2xx() { awk '/Non-2xx or 3xx responses:/ {n = $NF} END {print n + 0}' "$tmp/wrk-$1.txt"; }
wrk_errors() { grep -E '^ +Socket errors:' "$tmp/wrk-$1.txt" | sed 's/^ *//' || true; }

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); wrk -t$threads -c$connections -d$duration --latency (after a $warmup warm-up); $placement"
echo "toolport: $TOOLPORT_BIN ($("$TOOLPORT_BIN" --version 2>/dev/null || echo '?'))"
echo "node: $("$NODE" --version), @modelcontextprotocol/sdk $("$NODE" -p 'require(process.argv[1]).version' "$bench/node_modules/@modelcontextprotocol/sdk/package.json"), $(nginx -v 2>&1 | sed 's/.*: //'), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"

# ------------------------------------------------------------------ (a) Toolport
say "Toolport: tools/call test_simple_text (echo-equivalent)"
cat > "$tmp/toolport.yaml" <<'EOF'
http:
  max_sessions: 20000
EOF
printf '%s\n' "${BENCH_TOOLPORT_YAML:-}" >> "$tmp/toolport.yaml"
port=$(free_port)
"${pin_server[@]}" "$TOOLPORT_BIN" serve --config "$tmp/toolport.yaml" --listen "127.0.0.1:$port" --packs conformance \
  --log-level warn 2> "$tmp/toolport.log" &
tp_pid=$!
pids+=("$tp_pid")
wait_port "$tp_pid" "$port"
tp_url="http://127.0.0.1:$port/mcp"
tp_idle_rss=$(rss_kb "$tp_pid")
sid=$(mcp_session "$tp_url")
mcp_call "$tp_url" "$sid" > "$tmp/toolport-body.json"
grep -qF "$expected_text" "$tmp/toolport-body.json" || die "unexpected Toolport reply: $(cat "$tmp/toolport-body.json")"
echo "  reply: $(cat "$tmp/toolport-body.json")"
run_wrk toolport "$tp_url" "$sid"
# The same call on the stateless 2026-07-28 wire (no session: each request carries its _meta
# and the Mcp-Method / Mcp-Name headers; bench/mcp_call.lua without MCP_SESSION_ID).
say "Toolport: the same call on the stateless 2026-07-28 wire"
run_wrk toolport_stateless "$tp_url" ""
stop "$tp_pid"

# ------------------------------------------------------------------ (b) TypeScript SDK
say "TypeScript SDK $("$NODE" -p 'require(process.argv[1]).version' "$bench/node_modules/@modelcontextprotocol/sdk/package.json") (stateful, enableJsonResponse): tools/call test_simple_text"
port=$(free_port)
"${pin_server[@]}" "$NODE" "$bench/ts-sdk-server.mjs" "$port" > "$tmp/ts.log" 2>&1 &
ts_pid=$!
pids+=("$ts_pid")
wait_port "$ts_pid" "$port"
ts_url="http://127.0.0.1:$port/mcp"
ts_idle_rss=$(rss_kb "$ts_pid")
sid=$(mcp_session "$ts_url")
reply=$(mcp_call "$ts_url" "$sid")
grep -qF "$expected_text" <<<"$reply" || die "unexpected TS SDK reply: $reply"
echo "  reply: $reply"
run_wrk ts "$ts_url" "$sid"
stop "$ts_pid"

# ------------------------------------------------------------------ (c) nginx
say "nginx: fixed JSON body at /mcp (HTTP with no work)"
body=$(cat "$tmp/toolport-body.json")
[[ "$body" != *"'"* && "$body" != *'\'* && "$body" != *'$'* ]] || die "the body needs escaping for nginx.conf"
port=$(free_port)
write_nginx_conf "$tmp/nginx" "$nginx_workers" <<EOF
  server {
    listen 127.0.0.1:$port;
    location /mcp {
      default_type application/json;
      return 200 '$body';
    }
  }
EOF
"${pin_server[@]}" nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" &
ngx_pid=$!
pids+=("$ngx_pid")
wait_port "$ngx_pid" "$port"
ngx_url="http://127.0.0.1:$port/mcp"
reply=$(mcp_call "$ngx_url" none)
[[ "$reply" == "$body" ]] || die "nginx answered something else: $reply"
run_wrk nginx "$ngx_url" fixed-session-id
stop "$ngx_pid"

# ------------------------------------------------------------------ memory per session
# per_session NAME START-FUNCTION: a fresh server, its VmRSS, $sessions sessions, its VmRSS
# again; sets mem_before / mem_after (kB), mem_per (bytes per session), mem_open (JSON).
per_session() {
  local name=$1 start=$2 port pid
  port=$(free_port)
  "$start" "$port" > "$tmp/$name-sessions.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  wait_port "$pid" "$port"
  mem_before=$(rss_kb "$pid")
  mem_open=$("$NODE" "$bench/open_sessions.mjs" "http://127.0.0.1:$port/mcp" "$sessions" 16) \
    || die "$name: opening $sessions sessions failed: $mem_open"
  sleep 1
  mem_after=$(rss_kb "$pid")
  stop "$pid"
  mem_per=$(( (mem_after - mem_before) * 1024 / sessions ))
}
# exec: the background job is the server itself, so its pid is the one we measure and stop.
start_toolport() {
  exec "$TOOLPORT_BIN" serve --config "$tmp/toolport.yaml" --listen "127.0.0.1:$1" --packs conformance --log-level warn
}
start_ts() { exec "$NODE" "$bench/ts-sdk-server.mjs" "$1"; }
if ((sessions > 0)); then
  say "memory: $sessions sessions (initialize + notifications/initialized, 16 keep-alive connections)"
  per_session toolport start_toolport
  tp_before=$mem_before tp_after=$mem_after tp_per=$mem_per
  echo "  toolport: VmRSS $tp_before kB -> $tp_after kB: $tp_per bytes per session; $mem_open"
  per_session ts start_ts
  ts_before=$mem_before ts_after=$mem_after ts_per=$mem_per
  echo "  ts-sdk:   VmRSS $ts_before kB -> $ts_after kB: $ts_per bytes per session; $mem_open"
fi

# ------------------------------------------------------------------ binary size
cp "$TOOLPORT_BIN" "$tmp/toolport.stripped"
strip "$tmp/toolport.stripped"
size_unstripped=$(stat -c %s "$TOOLPORT_BIN")
size_stripped=$(stat -c %s "$tmp/toolport.stripped")

# ------------------------------------------------------------------ report
say "results"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
printf '%-34s %12s %10s %10s %8s\n' "server (tools/call over HTTP)" "requests/s" "p50 ms" "p99 ms" "non-2xx"
for n in toolport toolport_stateless ts nginx; do
  case $n in
    toolport) label="Toolport (test_simple_text)" ;;
    toolport_stateless) label="Toolport, stateless 2026-07-28 wire" ;;
    ts) label="TypeScript SDK 1.32.2 (Node 22)" ;;
    nginx) label="nginx fixed body (ceiling)" ;;
  esac
  printf '%-34s %12s %10s %10s %8s\n' "$label" "$(wrk_rps $n)" "$(wrk_pct $n 50)" "$(wrk_pct $n 99)" "$(wrk_non2xx $n)"
  errs=$(wrk_errors $n)
  [[ -n "$errs" ]] && echo "    $n: $errs"
done
echo
printf '%-22s %12s %10s %10s\n' "ratio" "requests/s" "p50" "p99"
printf '%-22s %12s %10s %10s\n' "Toolport / TS SDK" "$(ratio "$(wrk_rps toolport)" "$(wrk_rps ts)")" \
  "$(ratio "$(wrk_pct toolport 50)" "$(wrk_pct ts 50)")" "$(ratio "$(wrk_pct toolport 99)" "$(wrk_pct ts 99)")"
printf '%-22s %12s %10s %10s\n' "Toolport / nginx" "$(ratio "$(wrk_rps toolport)" "$(wrk_rps nginx)")" \
  "$(ratio "$(wrk_pct toolport 50)" "$(wrk_pct nginx 50)")" "$(ratio "$(wrk_pct toolport 99)" "$(wrk_pct nginx 99)")"
printf '%-22s %12s %10s %10s\n' "stateless / stateful" "$(ratio "$(wrk_rps toolport_stateless)" "$(wrk_rps toolport)")" \
  "$(ratio "$(wrk_pct toolport_stateless 50)" "$(wrk_pct toolport 50)")" \
  "$(ratio "$(wrk_pct toolport_stateless 99)" "$(wrk_pct toolport 99)")"
echo "(issue 31: Toolport / nginx >= 0.75x requests/s; the stateless wire within 10 % of the stateful one)"
echo
echo "Toolport idle RSS (VmRSS right after start): $tp_idle_rss kB   (TS SDK server: $ts_idle_rss kB)"
if ((sessions > 0)); then
  echo "Toolport RSS per open session ($sessions sessions): $tp_per bytes   ($tp_before -> $tp_after kB)"
  echo "TS SDK RSS per open session ($sessions sessions):   $ts_per bytes   ($ts_before -> $ts_after kB)"
fi
echo "Toolport binary: $size_stripped bytes stripped ($(awk -v b="$size_stripped" 'BEGIN{printf "%.1f", b/1048576}') MiB), $size_unstripped bytes as built"
echo "  shared libraries: $(ldd "$TOOLPORT_BIN" | awk '{print $1}' | grep -vE '^(linux-vdso|/lib64/ld-linux)' | sed 's/\.so.*//' | tr '\n' ' ')"
