#!/usr/bin/env bash
# Gateway mode's costs, side by side in one run. One upstream Toolport serves the conformance
# pack over HTTP (`serve --listen --packs conformance`); the tool called everywhere is
# test_simple_text (no arguments, one fixed text item: the echo-equivalent, nil work). It is
# called, in turn:
#   direct        straight at the upstream;
#   nginx hop     through nginx as a keep-alive reverse proxy in front of the upstream: what one
#                 HTTP hop costs on this machine, the floor under any proxy;
#   gateway HTTP  through a gateway Toolport whose one upstream is that server (url:);
#   gateway stdio through a gateway Toolport whose one upstream is a `serve --stdio` child of it
#                 (command:), same pack, same tool.
# The gateway serves the upstream's tools under their own names, so the same tools/call goes to
# all four. Two measurements, each in BENCH_ROUNDS rounds in which the four take turns (a
# burst of load on the host then skews one round of every figure, not one figure; each figure
# is the median over the rounds):
#   1. one connection, sequential calls (wrk -t1 -c1 --latency) for at least BENCH_CALLS calls
#      each (the duration is set from the warm-up's rate): gateway p50 / p99 minus direct
#      p50 / p99 is the added latency (issue 31's targets: HTTP upstream < 70 us / < 300 us,
#      stdio upstream p50 < 60 us);
#   2. BENCH_CONNECTIONS (16) connections (wrk -t2 -c16) for BENCH_DURATION each: calls/s
#      through the gateway over direct, and through the one stdio child over direct (target
#      >= 0.6).
# Beside both: the CPU time per call of every process (wrk, gateway, upstream, the stdio child,
#   nginx; /proc and bash's `time`), with its system (kernel) part, and the TCP connections a
#   gateway opens per call: on 2 cores the load generator, the gateway and the upstream share
#   the CPUs, and those figures say how. The summary ends with each hop's CPU per call over
#   the upstream's per served call (direct): the gateway's (target <= 1.2, at one connection
#   and at 16) and nginx's, the floor a proxy that reads nothing of the calls sets here.
# Every answer is checked: no non-2xx, and each Toolport's /metrics must count every
# test_simple_text call as OK (a tool error is an HTTP 200, so wrk alone would not see it).
#
#   bench/run_gateway_bench.sh     # about 2.5 minutes
# Knobs (environment): BENCH_ROUNDS (3), BENCH_CALLS (20000), BENCH_DURATION (5s),
#   BENCH_CONNECTIONS (16), BENCH_THREADS (2, wrk threads for measurement 2), BENCH_WARMUP (2s),
#   TOOLPORT_BIN (default build-bench/toolport, built if missing), BENCH_PIN (0: unpinned;
#   1: every server -- upstream, gateways, the stdio child, nginx -- on CPU 0 and wrk on the
#   other CPUs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${BENCH_ROUNDS:-3}
calls_wanted=${BENCH_CALLS:-20000}
duration=${BENCH_DURATION:-5s}
connections=${BENCH_CONNECTIONS:-16}
threads=${BENCH_THREADS:-2}
warmup=${BENCH_WARMUP:-2s}
protocol_version=2025-11-25
tool=test_simple_text
expected_text="This is a simple text response for testing."
die() { echo "run_gateway_bench.sh: $*" >&2; exit 1; }
source "$root/bench/mcp_session.sh"
source "$root/bench/nginx_conf.sh"
command -v wrk >/dev/null && command -v curl >/dev/null && command -v nginx >/dev/null || "$root/scripts/install-deps.sh" --test

pin_server=() pin_load=() placement="unpinned: the scheduler places wrk, the gateway, the upstream (and nginx) on the $(nproc) CPUs"
if [[ "${BENCH_PIN:-0}" == 1 ]]; then
  (( $(nproc) >= 2 )) || die "BENCH_PIN=1 needs 2 CPUs"
  pin_server=(taskset -c 0) pin_load=(taskset -c "1-$(( $(nproc) - 1 ))")
  placement="pinned: upstream, gateways, the stdio child and nginx share CPU 0; wrk on CPUs 1-$(( $(nproc) - 1 ))"
fi

if [[ -z "${TOOLPORT_BIN:-}" ]]; then
  build="$root/build-bench"
  if [[ ! -f "$build/build.ninja" ]]; then
    CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DTOOLPORT_BUILD_TESTS=OFF >/dev/null
  fi
  # Others may build in the same tree: the lock serialises builds.
  flock /tmp/toolport-build.lock ninja -C "$build" toolport
  TOOLPORT_BIN="$build/toolport"
fi
[[ -x "$TOOLPORT_BIN" ]] || die "no toolport binary at $TOOLPORT_BIN"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
tmp=$(mktemp -d)
trap cleanup EXIT
trap 'exit 130' INT TERM
# A copy: a rebuild of the tree during the run must not change what is measured (the stdio
# upstream is started from it as well).
cp "$TOOLPORT_BIN" "$tmp/toolport"
bin="$tmp/toolport"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
sys_ticks() { awk '{print $15}' "/proc/$1/stat"; }
# TCP connections opened on this machine so far (connect() calls, /proc/net/snmp ActiveOpens):
# during a run, wrk's own and those of a gateway to its upstream.
active_opens() { awk '$1 == "Tcp:" { if (!c) { for (i = 2; i <= NF; i++) if ($i == "ActiveOpens") c = i } else print $c }' /proc/net/snmp; }
hz=$(getconf CLK_TCK)
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u);
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000;
    printf "%.4f\n", n }'
}
pct_ms() { to_ms "$(awk -v p="$2%" '$1 == p {print $2}' "$1")"; }  # FILE 50|99
rps() { awk '/^Requests\/sec:/ {print $2}' "$1"; }
count() { awk '/requests in/ {print $1}' "$1"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
check_wrk() {  # FILE: no non-2xx, no socket errors
  if grep -qE 'Non-2xx|Socket errors' "$1"; then die "errors in $(basename "$1"): $(grep -E 'Non-2xx|Socket errors' "$1")"; fi
}

wait_health() {  # PID PORT: until /health says the upstream `up` is connected
  local i
  for i in $(seq 1 200); do
    kill -0 "$1" 2>/dev/null || die "the gateway (pid $1) exited during start-up: $(tail -5 "$tmp/gateway-$2.log")"
    curl -s --max-time 1 "http://127.0.0.1:$2/health" 2>/dev/null | grep -q '"up":"connected' && return 0
    sleep 0.05
  done
  die "the gateway on port $2 never connected to its upstream: $(curl -s "http://127.0.0.1:$2/health"); $(tail -5 "$tmp/gateway-$2.log")"
}

call_once() {  # URL SID: one tools/call; prints the reply
  curl -sS --max-time 10 -X POST "$1" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Mcp-Session-Id: $2" -H "MCP-Protocol-Version: $protocol_version" \
    --data "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$tool\",\"arguments\":{}}}"
}

# Calls counted by a Toolport's /metrics: "OK-count other-count" for test_simple_text.
calls_counted() {
  curl -sS --max-time 5 "http://127.0.0.1:$1/metrics" | awk -v t="$tool" '
    $1 ~ /^toolport_tool_calls_total\{/ && index($1, "tool=\"" t "\"") {
      if (index($1, "code=\"OK\"")) ok += $2; else bad += $2 }
    END { printf "%d %d\n", ok, bad }'
}

# ------------------------------------------------------------------ the servers
up_port=$(free_port)
"${pin_server[@]}" "$bin" serve --listen "127.0.0.1:$up_port" --packs conformance --log-level warn 2> "$tmp/upstream.log" &
up_pid=$!
pids+=("$up_pid")

nginx_port=$(free_port)
write_nginx_conf "$tmp/nginx" 1 <<NGINX
  upstream toolport { server 127.0.0.1:$up_port; keepalive 32; }
  server {
    listen 127.0.0.1:$nginx_port;
    # The client's Host (127.0.0.1:PORT): Toolport refuses Host names it does not know (DNS
    # rebinding protection), and "toolport" is one.
    location / { proxy_pass http://toolport; proxy_http_version 1.1; proxy_set_header Connection "";
                 proxy_set_header Host \$http_host; }
  }
NGINX
"${pin_server[@]}" nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" &
nginx_pid=$!
pids+=("$nginx_pid")

cat > "$tmp/gw-http.yaml" <<YAML
upstreams:
  up:
    url: http://127.0.0.1:$up_port/mcp
    downstream_calls_estimate: 0
YAML
cat > "$tmp/gw-stdio.yaml" <<YAML
upstreams:
  up:
    command: [$bin, serve, --stdio, --packs, conformance]
    downstream_calls_estimate: 0
YAML
gwh_port=$(free_port)
# No packs: the gateway serves its upstream's tools and nothing else (no --packs: the default
# list is empty). The pipeline is left at its defaults; the upstream calls no web API, as its
# downstream_calls_estimate says (see bench/README.md on the budget).
"${pin_server[@]}" "$bin" serve --listen "127.0.0.1:$gwh_port" --config "$tmp/gw-http.yaml" --log-level warn \
  2> "$tmp/gateway-$gwh_port.log" &
gwh_pid=$!
pids+=("$gwh_pid")
gws_port=$(free_port)
"${pin_server[@]}" "$bin" serve --listen "127.0.0.1:$gws_port" --config "$tmp/gw-stdio.yaml" --log-level warn \
  2> "$tmp/gateway-$gws_port.log" &
gws_pid=$!
pids+=("$gws_pid")

sid_direct=$(open_mcp_session "http://127.0.0.1:$up_port/mcp" "$protocol_version") || die "no session on the upstream"
for _ in $(seq 1 100); do curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$nginx_port/health" && break; sleep 0.05; done
sid_nginx=$(open_mcp_session "http://127.0.0.1:$nginx_port/mcp" "$protocol_version") || die "no session through nginx"
wait_health "$gwh_pid" "$gwh_port"
wait_health "$gws_pid" "$gws_port"
sid_gwh=$(open_mcp_session "http://127.0.0.1:$gwh_port/mcp" "$protocol_version") || die "no session on the HTTP gateway"
sid_gws=$(open_mcp_session "http://127.0.0.1:$gws_port/mcp" "$protocol_version") || die "no session on the stdio gateway"
child_pid=$(cat /proc/"$gws_pid"/task/*/children | tr ' ' '\n' | grep -m1 . || true)
[[ -n "$child_pid" ]] || die "the stdio gateway has no child process"

names=(direct nginx gwh gws)
declare -A port sid label
port=([direct]=$up_port [nginx]=$nginx_port [gwh]=$gwh_port [gws]=$gws_port)
sid=([direct]=$sid_direct [nginx]=$sid_nginx [gwh]=$sid_gwh [gws]=$sid_gws)
label=([direct]="direct" [nginx]="nginx hop (reference)" [gwh]="through the gateway, HTTP upstream" [gws]="through the gateway, stdio upstream")
for n in "${names[@]}"; do
  reply=$(call_once "http://127.0.0.1:${port[$n]}/mcp" "${sid[$n]}")
  [[ "$reply" == *"$expected_text"* && "$reply" != *'"isError":true'* ]] || die "$n: unexpected reply: $reply"
done
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $placement"
if pgrep -x ninja >/dev/null; then echo "WARNING: a build (ninja) is running: the figures will be noisy"; fi
echo "toolport: $TOOLPORT_BIN ($(grep -o 'CMAKE_BUILD_TYPE:STRING=.*' "$(dirname "$TOOLPORT_BIN")/CMakeCache.txt" 2>/dev/null | cut -d= -f2 || echo '?')), $(nginx -v 2>&1 | sed 's/.*: //'), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
echo "tree: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' + uncommitted changes')"
echo "upstream: toolport serve --listen 127.0.0.1:$up_port --packs conformance   (pid $up_pid)"
echo "gateway (HTTP upstream):  toolport serve --listen 127.0.0.1:$gwh_port --config gw-http.yaml   (pid $gwh_pid)"
sed 's/^/    /' "$tmp/gw-http.yaml"
echo "gateway (stdio upstream): toolport serve --listen 127.0.0.1:$gws_port --config gw-stdio.yaml   (pid $gws_pid, child $child_pid)"
sed 's/^/    /' "$tmp/gw-stdio.yaml"
echo "tool: $tool; first reply through the HTTP gateway: $(call_once "http://127.0.0.1:$gwh_port/mcp" "$sid_gwh")"

# Whether a build (ninja) ran at the start or the end of any measured run: it would share the
# CPUs with what is measured.
builds_seen=0
note_builds() { if pgrep -x ninja >/dev/null; then builds_seen=$((builds_seen + 1)); fi; }
wrk_calls() {  # NAME THREADS CONNECTIONS DURATION [wrk options]
  local n=$1 t=$2 c=$3 d=$4
  shift 4
  note_builds
  MCP_SESSION_ID="${sid[$n]}" MCP_TOOL=$tool "${pin_load[@]}" wrk -t"$t" -c"$c" -d"$d" "$@" \
    -s "$root/bench/mcp_call.lua" "http://127.0.0.1:${port[$n]}/mcp"
  note_builds
}

# measured KEY NAME THREADS CONNECTIONS DURATION OUT: one measured run (wrk --latency into OUT),
# adding to the totals under KEY: calls made, CPU time of every process (clock ticks from
# /proc; wrk's user + system seconds from bash's `time`), and TCP connections opened beside
# wrk's own.
procs=(upstream nginx gateway_http gateway_stdio stdio_child)
declare -A proc_pid cpu sys wrk_cpu made opens
proc_pid=([upstream]=$up_pid [nginx]=$nginx_pid [gateway_http]=$gwh_pid [gateway_stdio]=$gws_pid [stdio_child]=$child_pid)
nginx_worker=$(cat /proc/"$nginx_pid"/task/*/children | tr ' ' '\n' | grep -m1 . || true)
[[ -n "$nginx_worker" ]] && proc_pid[nginx]=$nginx_worker
TIMEFORMAT='wrk-cpu %U %S'
measured() {
  local key=$1 n=$2 t=$3 c=$4 d=$5 out=$6 p opened
  local -A before=() before_sys=()
  for p in "${procs[@]}"; do before[$p]=$(ticks "${proc_pid[$p]}") before_sys[$p]=$(sys_ticks "${proc_pid[$p]}"); done
  opened=$(active_opens)
  { time wrk_calls "$n" "$t" "$c" "$d" --latency > "$out"; } 2> "$out.time"
  for p in "${procs[@]}"; do
    cpu[$key,$p]=$(( ${cpu[$key,$p]:-0} + $(ticks "${proc_pid[$p]}") - ${before[$p]} ))
    sys[$key,$p]=$(( ${sys[$key,$p]:-0} + $(sys_ticks "${proc_pid[$p]}") - ${before_sys[$p]} ))
  done
  opens[$key]=$(( ${opens[$key]:-0} + $(active_opens) - opened - c ))
  check_wrk "$out"
  wrk_cpu[$key]=$(awk -v a="${wrk_cpu[$key]:-0}" '$1 == "wrk-cpu" {print a + $2 + $3}' "$out.time")
  made[$key]=$(( ${made[$key]:-0} + $(count "$out") ))
}
# CPU microseconds per call of process P under KEY (with its system part: "61.2 (sys 25.0)"),
# of wrk, and the line for measurement KEY.
cpu_total_us() { awk -v t="${cpu[$1,$2]}" -v hz="$hz" -v m="${made[$1]}" 'BEGIN {printf "%.1f", t / hz * 1e6 / m}'; }
cpu_us() {
  awk -v t="${cpu[$1,$2]}" -v s="${sys[$1,$2]}" -v hz="$hz" -v m="${made[$1]}" \
    'BEGIN {printf "%.1f (sys %.1f)", t / hz * 1e6 / m, s / hz * 1e6 / m}'
}
# A hop's CPU per call (process P under KEY) over the upstream's per served call (direct).
cpu_ratio() {
  awk -v a="$(cpu_total_us "$1" "$2")" -v b="$(cpu_total_us "${1%%:*}:direct" upstream)" 'BEGIN {printf "%.2f", a / b}'
}
wrk_us() { awk -v s="${wrk_cpu[$1]}" -v m="${made[$1]}" 'BEGIN {printf "%.1f", s * 1e6 / m}'; }
cpu_line() {
  case ${1#*:} in
    direct) echo "wrk $(wrk_us "$1") + upstream $(cpu_us "$1" upstream)" ;;
    nginx) echo "wrk $(wrk_us "$1") + nginx $(cpu_us "$1" nginx) + upstream $(cpu_us "$1" upstream)" ;;
    gwh) echo "wrk $(wrk_us "$1") + gateway $(cpu_us "$1" gateway_http) + upstream $(cpu_us "$1" upstream)" ;;
    gws) echo "wrk $(wrk_us "$1") + gateway $(cpu_us "$1" gateway_stdio) + child $(cpu_us "$1" stdio_child)" ;;
  esac
}
connects() { awk -v o="${opens[$1]}" -v m="${made[$1]}" 'BEGIN {printf "%.3f", (o < 0 ? 0 : o) / m}'; }

# ------------------------------------------------------------------ 1. one connection
echo
echo "=== 1. one connection, sequential calls: $rounds rounds, >= $calls_wanted calls each (wrk -t1 -c1 --latency) ==="
declare -A secs
for n in "${names[@]}"; do
  wrk_calls "$n" 1 1 "$warmup" > "$tmp/warm1-$n.txt"
  check_wrk "$tmp/warm1-$n.txt"
  # Whole seconds (wrk's unit) for at least the wanted count at the warm-up's rate, +15 %
  # (at most 10 s: a host busy during the warm-up would otherwise stretch the run).
  secs[$n]=$(awk -v r="$(rps "$tmp/warm1-$n.txt")" -v w="$calls_wanted" 'BEGIN {s = int(w / r * 1.15) + 1; print (s > 10 ? 10 : s)}')
done
echo "    durations from the warm-up rates: $(for n in "${names[@]}"; do printf '%s %ss  ' "$n" "${secs[$n]}"; done)"
for r in $(seq 1 "$rounds"); do
  line="    round $r:"
  for n in "${names[@]}"; do
    measured "1:$n" "$n" 1 1 "${secs[$n]}s" "$tmp/lat-$n-$r.txt"
    line+=$(printf ' %s %.1f/%.1f us (%d calls);' "$n" "$(awk -v v="$(pct_ms "$tmp/lat-$n-$r.txt" 50)" 'BEGIN {print v * 1000}')" \
      "$(awk -v v="$(pct_ms "$tmp/lat-$n-$r.txt" 99)" 'BEGIN {print v * 1000}')" "$(count "$tmp/lat-$n-$r.txt")")
  done
  echo "$line  (p50/p99)"
done
declare -A p50 p99 lat_calls
for n in "${names[@]}"; do
  p50[$n]=$(for r in $(seq 1 "$rounds"); do pct_ms "$tmp/lat-$n-$r.txt" 50; done | median)
  p99[$n]=$(for r in $(seq 1 "$rounds"); do pct_ms "$tmp/lat-$n-$r.txt" 99; done | median)
  lat_calls[$n]=$(for r in $(seq 1 "$rounds"); do count "$tmp/lat-$n-$r.txt"; done | sort -n | head -1)
done

# ------------------------------------------------------------------ 2. concurrent connections
echo
echo "=== 2. $connections connections: $rounds rounds of $duration each (wrk -t$threads -c$connections --latency) ==="
for n in "${names[@]}"; do
  wrk_calls "$n" "$threads" "$connections" "$warmup" > "$tmp/warm16-$n.txt"
  check_wrk "$tmp/warm16-$n.txt"
done
for r in $(seq 1 "$rounds"); do
  line="    round $r:"
  for n in "${names[@]}"; do
    measured "16:$n" "$n" "$threads" "$connections" "$duration" "$tmp/tput-$n-$r.txt"
    line+=$(printf ' %s %.0f/s;' "$n" "$(rps "$tmp/tput-$n-$r.txt")")
  done
  echo "$line"
done
echo "    last round through the HTTP gateway, in full:"
sed 's/^/      /' "$tmp/tput-gwh-$rounds.txt"
declare -A tput tp50 tp99
for n in "${names[@]}"; do
  tput[$n]=$(for r in $(seq 1 "$rounds"); do rps "$tmp/tput-$n-$r.txt"; done | median)
  tp50[$n]=$(for r in $(seq 1 "$rounds"); do pct_ms "$tmp/tput-$n-$r.txt" 50; done | median)
  tp99[$n]=$(for r in $(seq 1 "$rounds"); do pct_ms "$tmp/tput-$n-$r.txt" 99; done | median)
done

# ------------------------------------------------------------------ every call answered OK?
read -r up_ok up_bad <<<"$(calls_counted "$up_port")"
read -r gwh_ok gwh_bad <<<"$(calls_counted "$gwh_port")"
read -r gws_ok gws_bad <<<"$(calls_counted "$gws_port")"
sum_lat() { local s=0 f; for f in "$tmp"/lat-"$1"-*.txt "$tmp"/tput-"$1"-*.txt "$tmp"/warm1-"$1".txt "$tmp"/warm16-"$1".txt; do s=$((s + $(count "$f"))); done; echo "$s"; }
(( up_bad == 0 && gwh_bad == 0 && gws_bad == 0 )) ||
  die "tool errors counted: upstream $up_bad, HTTP gateway $gwh_bad, stdio gateway $gws_bad (see the logs: $(tail -3 "$tmp/gateway-$gwh_port.log" "$tmp/gateway-$gws_port.log"))"
(( gwh_ok >= $(sum_lat gwh) && gws_ok >= $(sum_lat gws) )) ||
  die "the gateways counted fewer OK calls than wrk made: HTTP $gwh_ok < $(sum_lat gwh) or stdio $gws_ok < $(sum_lat gws)"
(( up_ok >= $(sum_lat direct) + $(sum_lat nginx) + $(sum_lat gwh) )) ||
  die "the upstream counted $up_ok OK calls, fewer than direct + nginx + HTTP gateway made"
echo
echo "every call answered OK (/metrics): upstream $up_ok (direct + nginx + HTTP gateway), HTTP gateway $gwh_ok, stdio gateway $gws_ok; no tool errors"

# ------------------------------------------------------------------ summary
met() { awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN {ok = (op == "<") ? v < t : v >= t; print ok ? "met" : "MISSED"}'; }
us() { awk -v a="$1" -v b="${2:-0}" 'BEGIN {printf "%.1f", (a - b) * 1000}'; }
plus_us() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%+.1f", (a - b) * 1000}'; }
echo
echo "=== summary: medians over $rounds rounds; $placement ==="
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if ((builds_seen)); then echo "WARNING: a build (ninja) was running during $builds_seen samples of the runs: these figures are not clean"; fi
printf '%-40s %9s %9s %8s %9s   %s\n' "1. one connection, sequential" "p50 us" "p99 us" "calls" "connects" "CPU us per call: wrk + servers"
for n in "${names[@]}"; do
  printf '%-40s %9.1f %9.1f %8s %9s   %s\n' "${label[$n]}" "$(us "${p50[$n]}")" "$(us "${p99[$n]}")" "${lat_calls[$n]}" \
    "$(connects "1:$n")" "$(cpu_line "1:$n")"
done
echo "(calls: the fewest of any round; connects: new TCP connections per call beside wrk's own, system-wide)"
add50=$(plus_us "${p50[gwh]}" "${p50[direct]}") add99=$(plus_us "${p99[gwh]}" "${p99[direct]}")
adds50=$(plus_us "${p50[gws]}" "${p50[direct]}")
printf '%-40s %9s %9s\n' "added by the gateway (HTTP upstream)" "$add50" "$add99"
printf '%-40s %9s %9s\n' "  target" "< 70" "< 300"
printf '%-40s %9s %9s\n' "  " "$(met "$add50" "<" 70)" "$(met "$add99" "<" 300)"
printf '%-40s %9s %9s\n' "added by the gateway (stdio upstream)" "$adds50" "$(plus_us "${p99[gws]}" "${p99[direct]}")"
printf '%-40s %9s %9s\n' "  target" "< 60" ""
printf '%-40s %9s %9s\n' "  " "$(met "$adds50" "<" 60)" ""
printf '%-40s %9s %9s\n' "added by the nginx hop (reference)" "$(plus_us "${p50[nginx]}" "${p50[direct]}")" "$(plus_us "${p99[nginx]}" "${p99[direct]}")"
echo
printf '%-40s %9s %8s %8s %9s   %s\n' "2. $connections connections" "calls/s" "p50 us" "p99 us" "connects" "CPU us per call: wrk + servers"
for n in "${names[@]}"; do
  printf '%-40s %9.0f %8.0f %8.0f %9s   %s\n' "${label[$n]}" "${tput[$n]}" "$(us "${tp50[$n]}")" "$(us "${tp99[$n]}")" \
    "$(connects "16:$n")" "$(cpu_line "16:$n")"
done
ratio=$(awk -v a="${tput[gwh]}" -v b="${tput[direct]}" 'BEGIN {printf "%.2f", a / b}')
stdio_ratio=$(awk -v a="${tput[gws]}" -v b="${tput[direct]}" 'BEGIN {printf "%.2f", a / b}')
echo "throughput through the gateway / direct (HTTP upstream): $ratio"
echo "through one stdio child / direct HTTP to the same tool: $stdio_ratio ($(printf '%.0f' "${tput[gws]}") / $(printf '%.0f' "${tput[direct]}") calls/s; target >= 0.6: $(met "$stdio_ratio" ">=" 0.6))"
echo "nginx hop / direct: $(awk -v a="${tput[nginx]}" -v b="${tput[direct]}" 'BEGIN {printf "%.2f", a / b}') (reference: one HTTP proxy hop doing no work, on the same CPUs)"
echo
echo "CPU per forwarded call over the upstream's per served call (direct), target <= 1.2:"
printf '%-40s %9s %9s\n' "" "1 conn" "$connections conns"
for hop in "gwh gateway_http" "gws gateway_stdio" "nginx nginx"; do
  read -r n p <<<"$hop"
  r1=$(cpu_ratio "1:$n" "$p") r16=$(cpu_ratio "16:$n" "$p")
  if [[ $n == nginx ]]; then
    printf '%-40s %9s %9s\n' "nginx hop (reference: reads nothing)" "$r1" "$r16"
  else
    printf '%-40s %9s %9s   %s %s\n' "${label[$n]}" "$r1" "$r16" "$(met "$r1" "<" 1.2001)" "$(met "$r16" "<" 1.2001)"
  fi
done
