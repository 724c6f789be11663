#!/usr/bin/env bash
# System calls per tools/call, counted by `strace -c`: the kernel's share of a call's CPU (about
# half of a gateway's on loopback), which callgrind does not see. The same three servers as
# run_gateway_callgrind.sh, all native, one measured at a time:
#   upstream       `serve --packs conformance`, called directly;
#   gateway_http   a gateway in front of an HTTP upstream;
#   gateway_stdio  a gateway whose stdio child is the upstream (the child is not counted).
# bench/callgrind_drive.mjs opens one MCP session on one keep-alive connection, makes
# SYSCALLS_WARMUP sequential calls of test_simple_text, attaches strace to the measured server
# (all its threads), makes SYSCALLS_CALLS more and detaches: the counts cover those calls only.
# strace slows the server it watches, so a reply that would have arrived while the server
# waited may be there already: the figures are an upper bound on waits (epoll_wait) and a
# lower bound on failed reads (EAGAIN). Counts, not times, are what to compare.
#
#   bench/run_gateway_syscalls.sh        # half a minute; TOOLPORT_BIN (default build/toolport)
# Knobs: SYSCALLS_CALLS (2000), SYSCALLS_WARMUP (200), SYSCALLS_ONLY (one of the three names).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench="$root/bench"
die() { echo "run_gateway_syscalls.sh: $*" >&2; exit 1; }
source "$bench/bench_setup.sh"
bench_install_missing strace curl node
NODE=$(command -v node)
bench_workdir syscalls
bin="${TOOLPORT_BIN:-$root/build/toolport}"
[[ -x "$bin" ]] || die "no toolport binary at $bin (set TOOLPORT_BIN)"
calls=${SYSCALLS_CALLS:-2000}
warmup=${SYSCALLS_WARMUP:-200}
only=${SYSCALLS_ONLY:-}
expected_text="This is a simple text response for testing."

start() {  # PORT ARGS...: starts `toolport serve ARGS... --listen 127.0.0.1:PORT`; sets $started
  local port=$1
  shift
  "$bin" serve "$@" --listen "127.0.0.1:$port" --log-level warn 2> "$tmp/serve-$port.log" &
  started=$!
  pids+=("$started")
  wait_healthy "$port"
}

declare -A per_call
measure() {  # NAME PORT PID: drives calls on PORT while strace counts PID's system calls
  local name=$1 port=$2 pid=$3 counts="$tmp/$1.strace"
  "$NODE" "$bench/callgrind_drive.mjs" stateful "http://127.0.0.1:$port/mcp" test_simple_text "$warmup" "$calls" \
    "$expected_text" \
    "strace -c -f -p $pid -o $counts 2>/dev/null & echo \$! > $tmp/strace.pid; sleep 1" \
    "kill -INT \$(cat $tmp/strace.pid); while kill -0 \$(cat $tmp/strace.pid) 2>/dev/null; do sleep 0.1; done" \
    > /dev/null
  [[ -s "$counts" ]] || die "$name: strace wrote no counts"
  # strace -c's table: calls in column 4, errors (if any) in 5, the name last.
  per_call[$name]=$(awk -v n="$calls" '
    /^-/ || /^%/ || / total$/ || NF < 5 {next}
    {name = $NF; c = $4; e = (NF == 6) ? $5 : 0; total += c
     if (c / n < 0.005) next  # start-up leftovers: a pins file read, a timer
     printf "%s %.2f%s\n", name, c / n, (e > 0 ? sprintf(" (%.2f failed)", e / n) : "")}
    END {printf "total %.2f\n", total / n}' "$counts")
}

if [[ -z "$only" || "$only" == upstream ]]; then
  port=$(free_port)
  start "$port" --packs conformance
  measure upstream "$port" "$started"
fi
if [[ -z "$only" || "$only" == gateway_http ]]; then
  up_port=$(free_port)
  start "$up_port" --packs conformance
  printf 'upstreams:\n  up:\n    url: http://127.0.0.1:%s/mcp\n' "$up_port" > "$tmp/gw-http.yaml"
  port=$(free_port)
  start "$port" --config "$tmp/gw-http.yaml"
  measure gateway_http "$port" "$started"
fi
if [[ -z "$only" || "$only" == gateway_stdio ]]; then
  printf 'upstreams:\n  up:\n    command: [%s, serve, --stdio, --packs, conformance]\n' "$bin" > "$tmp/gw-stdio.yaml"
  port=$(free_port)
  start "$port" --config "$tmp/gw-stdio.yaml"
  measure gateway_stdio "$port" "$started"
fi

echo "toolport: $bin; tree $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' + uncommitted changes')"
echo "system calls per tools/call (test_simple_text, $calls calls after $warmup, one connection):"
for name in upstream gateway_http gateway_stdio; do
  [[ -n "${per_call[$name]:-}" ]] || continue
  echo "  $name: $(echo "${per_call[$name]}" | paste -sd ';' | sed 's/;/; /g')"
done
