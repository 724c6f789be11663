#!/usr/bin/env bash
# Replicas benchmark (`sessions: shared`): what sharing sessions and tasks through Redis costs,
# measured side by side in one run on one redis-server (loopback, no persistence).
#
#   bench/run_replicas_bench.sh
#
# Three toolport processes serve the conformance pack with `store: redis://...`: A and B with
# `sessions: shared`, L with `sessions: local`. Measured:
#   1. tools/call throughput (wrk, BENCH_CONNECTIONS connections): L on a session it created,
#      against B on a session A created (B took it over from Redis);
#   2. tasks/get latency over Redis (wrk, one connection): B answering for a task A created;
#   3. a notification crossing replicas: test_trigger_tool_change POSTed to B, its
#      notifications/tools/list_changed read on a GET stream held on A; next to the same with
#      both on L (one replica, local session). BENCH_ROUNDS rounds.
# Knobs: BENCH_DURATION=10s BENCH_CONNECTIONS=16 BENCH_THREADS=2 BENCH_WARMUP=2s
#        BENCH_ROUNDS=300 TOOLPORT_BIN=path (default build-bench/toolport, built if missing)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench="$root/bench"
source "$bench/mcp_session.sh"
rounds=${BENCH_ROUNDS:-300}
version=2025-11-25

say() { printf '\n=== %s ===\n' "$*"; }
die() { echo "run_replicas_bench.sh: $*" >&2; exit 1; }

source "$bench/bench_setup.sh"
bench_install_missing wrk curl redis-server redis-cli
bench_node_modules
bench_toolport_bin
bench_wrk_knobs
bench_workdir replicas

redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" >"$tmp/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [[ $(redis-cli -p "$redis_port" ping 2>/dev/null) == PONG ]] && break; sleep 0.05; done

start_replica() {  # NAME SESSIONS: sets $port (not in a subshell: pids and the trap stay here)
  local name=$1 sessions=$2
  port=$(free_port)
  printf 'store:\n  url: redis://127.0.0.1:%s\nsessions: %s\nlog:\n  level: warn\n' "$redis_port" "$sessions" >"$tmp/$name.yaml"
  "$TOOLPORT_BIN" serve --listen "127.0.0.1:$port" --packs conformance --config "$tmp/$name.yaml" 2>"$tmp/$name.log" &
  pids+=($!)
  wait_healthy "$port"
}
start_replica a shared; port_a=$port
start_replica b shared; port_b=$port
start_replica l local; port_l=$port
url_a=http://127.0.0.1:$port_a/mcp url_b=http://127.0.0.1:$port_b/mcp url_l=http://127.0.0.1:$port_l/mcp

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $(redis-server --version | cut -d' ' -f1-3); $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
echo "toolport: $TOOLPORT_BIN"

run_wrk() {  # NAME URL SID [lua] [connections] [threads]: leaves $tmp/wrk-NAME.txt
  local name=$1 url=$2 sid=$3 lua=${4:-$bench/mcp_call.lua} c=${5:-$connections} t=${6:-$threads}
  MCP_SESSION_ID="$sid" wrk -t"$t" -c"$c" -d"$warmup" -s "$lua" "$url" >/dev/null
  MCP_SESSION_ID="$sid" wrk -t"$t" -c"$c" -d"$duration" --latency -s "$lua" "$url" >"$tmp/wrk-$name.txt"
  sed 's/^/    /' "$tmp/wrk-$name.txt"
}
to_ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) printf "%.3f", v / 1000; else if (v ~ /ms$/) printf "%.3f", v + 0; else if (v ~ /s$/) printf "%.3f", v * 1000; else print "?" }'; }
wrk_rps() { awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk-$1.txt"; }
wrk_pct() { to_ms "$(awk -v p="$2%" '$1 == p {print $2}' "$tmp/wrk-$1.txt")"; }
wrk_non2xx() { awk '/Non-2xx or 3xx responses:/ {n = $NF} END {print n + 0}' "$tmp/wrk-$1.txt"; }

say "1. tools/call: a local session on L, and on B a session A created"
sid_l=$(open_mcp_session "$url_l" "$version")
sid_shared=$(open_mcp_session "$url_a" "$version")
curl -sS -X POST "$url_b" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $sid_shared" -H "MCP-Protocol-Version: $version" \
  --data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}' \
  | grep -q 'simple text response' || die "B did not serve the session A created"
echo "  local session (L):"
run_wrk local "$url_l" "$sid_l"
echo "  shared session (created on A, served by B):"
run_wrk shared "$url_b" "$sid_shared"

say "2. tasks/get over Redis: a task A created, read on B (one connection)"
init=$(curl -sS -D "$tmp/h" -X POST "$url_a" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  --data '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"clientInfo":{"name":"bench","version":"1"}}}')
sid_task=$(awk 'tolower($1) == "mcp-session-id:" {print $2}' "$tmp/h" | tr -d '\r')
curl -sS -o /dev/null -X POST "$url_a" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $sid_task" -H "MCP-Protocol-Version: $version" --data '{"jsonrpc":"2.0","method":"notifications/initialized"}'
created=$(curl -sS -X POST "$url_a" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $sid_task" -H "MCP-Protocol-Version: $version" \
  --data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0}}}')
task_id=$(printf '%s' "$created" | sed -n 's/.*"taskId":"\([0-9a-f]*\)".*/\1/p')
[[ -n "$task_id" ]] || die "no task from A: $created"
task_completed_on_b() {
  curl -sS -X POST "$url_b" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Mcp-Session-Id: $sid_task" -H "MCP-Protocol-Version: $version" \
    --data "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"$task_id\"}}" | grep -q '"completed"'
}
for _ in $(seq 1 100); do task_completed_on_b && break; sleep 0.05; done
task_completed_on_b || die "B does not see A's task completed"
MCP_TASK_ID="$task_id" run_wrk tasks_get "$url_b" "$sid_task" "$bench/mcp_tasks_get.lua" 1 1

say "3. a notification crossing replicas ($rounds rounds)"
sid_n=$(open_mcp_session "$url_a" "$version")
cross=$("$NODE" "$bench/replica_notify.mjs" "$sid_n" "$url_a" "$url_b" "$rounds")
echo "  GET stream on A, POST on B: $cross"
sid_s=$(open_mcp_session "$url_b" "$version")
same=$("$NODE" "$bench/replica_notify.mjs" "$sid_s" "$url_b" "$url_b" "$rounds")
echo "  GET stream and POST on B (shared session, through Redis): $same"
sid_ln=$(open_mcp_session "$url_l" "$version")
local_one=$("$NODE" "$bench/replica_notify.mjs" "$sid_ln" "$url_l" "$url_l" "$rounds")
echo "  GET stream and POST on L (local session): $local_one"

field() { printf '%s' "$1" | sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p"; }
say "summary"
rps_l=$(wrk_rps local) rps_s=$(wrk_rps shared)
printf '%-58s %s\n' "tools/call, local session on L (calls/s, p50, p99 ms):" "$rps_l, $(wrk_pct local 50), $(wrk_pct local 99)"
printf '%-58s %s\n' "tools/call, A's session on B (calls/s, p50, p99 ms):" "$rps_s, $(wrk_pct shared 50), $(wrk_pct shared 99)"
printf '%-58s %s\n' "shared / local throughput (target >= 0.6):" "$(awk -v a="$rps_s" -v b="$rps_l" 'BEGIN {printf "%.2f", a / b}')"
printf '%-58s %s\n' "tasks/get on B, A's task (p50, p99 ms; target p50 < 1):" "$(wrk_pct tasks_get 50), $(wrk_pct tasks_get 99)"
printf '%-58s %s\n' "notification A<-B (p50, p99 ms; target p99 < 2):" "$(field "$cross" notify_p50_ms), $(field "$cross" notify_p99_ms) (its POST: $(field "$cross" post_p50_ms), $(field "$cross" post_p99_ms))"
printf '%-58s %s\n' "notification on one replica, local session (p50, p99):" "$(field "$local_one" notify_p50_ms), $(field "$local_one" notify_p99_ms) (its POST: $(field "$local_one" post_p50_ms), $(field "$local_one" post_p99_ms))"
printf '%-58s %s\n' "non-2xx answers (local, shared, tasks/get):" "$(wrk_non2xx local), $(wrk_non2xx shared), $(wrk_non2xx tasks_get)"
