#!/usr/bin/env bash
# Instructions per directly served tools/call, counted by callgrind: deterministic where CPU time
# on a shared machine is not, and it says where the instructions go. `toolport serve --packs
# conformance` runs under `valgrind --tool=callgrind` and serves test_simple_text on three wires,
# one after the other:
#   stateful   Streamable HTTP in a session (initialize, 2025-11-25), one keep-alive connection;
#   stateless  Streamable HTTP in the 2026-07-28 revision (no session; _meta and Mcp-Method /
#              Mcp-Name on every call), one keep-alive connection;
#   stdio      `serve --stdio`, one line per call.
# bench/http_callgrind_drive.mjs makes CALLGRIND_WARMUP sequential calls, zeroes the counters
# (`vgdb --pid P zero`), makes CALLGRIND_CALLS more and dumps (`vgdb ... dump`): the dump holds
# those calls only, with no start-up or shutdown, and its total over CALLGRIND_CALLS is the
# figure printed. (bench/run_gateway_callgrind.sh does the same through a gateway.)
#
#   bench/run_http_callgrind.sh                    # about a minute; TOOLPORT_BIN (default build/toolport)
# Knobs (environment): CALLGRIND_CALLS (2000), CALLGRIND_WARMUP (200), CALLGRIND_TOP (25: the
#   functions listed per wire, by their own instructions), CALLGRIND_OUT (a directory to keep
#   the profiles in, for callgrind_annotate [--inclusive=yes] FILE; default: removed at the end),
#   CALLGRIND_ONLY (stateful, stateless or stdio: measure that one alone).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench="$root/bench"
script=run_http_callgrind.sh
workdir=http-callgrind
source "$bench/callgrind_setup.sh"

report() {  # WIRE DUMP: instructions per call and the top functions by their own instructions
  local total
  for _ in $(seq 1 100); do grep -q '^totals:' "$2" 2>/dev/null && break; sleep 0.1; done
  total=$(awk '/^summary:/ {print $2}' "$2")
  [[ -n "$total" ]] || die "$1: no callgrind dump in $2"
  result[$1]=$((total / calls))
  echo "== $1: $((total / calls)) instructions per call ($total over $calls calls; profile $2)"
  callgrind_annotate --threshold=100 "$2" 2>/dev/null |
    awk -v top="$top" '/^-+$/ {rule++} rule == 6 && /\(/ && !/below main|libc_start|io_context::run|toolport::serve\(|main \[|_M_invoke|0x0000/ && shown++ < top' |
    sed -E 's/ \[[^]]*\]$//' | cut -c1-170
}

declare -A result
valgrind_cmd=(valgrind --tool=callgrind)
for wire in stateful stateless stdio; do
  [[ -z "${CALLGRIND_ONLY:-}" || "$CALLGRIND_ONLY" == "$wire" ]] || continue
  if [[ $wire == stdio ]]; then
    command_json=$("$NODE" -e 'console.log(JSON.stringify(process.argv.slice(1)))' "${valgrind_cmd[@]}" \
      "--callgrind-out-file=$out/$wire.out" "$bin" serve --stdio --packs conformance --log-level warn)
    "$NODE" "$bench/http_callgrind_drive.mjs" stdio "$command_json" "$tool" "$warmup" "$calls" "$expected_text" \
      "vgdb --pid={pid} zero >/dev/null" "vgdb --pid={pid} dump >/dev/null" 2> "$tmp/$wire.log"
  else
    port=$(free_port)
    "${valgrind_cmd[@]}" --callgrind-out-file="$out/$wire.out" "$bin" serve --packs conformance \
      --listen "127.0.0.1:$port" --log-level warn 2> "$tmp/$wire.log" &
    pid=$!
    pids+=("$pid")
    wait_ready "$pid" "$port" "the server" "$tmp/$wire.log"
    "$NODE" "$bench/http_callgrind_drive.mjs" "$wire" "http://127.0.0.1:$port/mcp" "$tool" "$warmup" "$calls" \
      "$expected_text" "vgdb --pid=$pid zero >/dev/null" "vgdb --pid=$pid dump >/dev/null"
  fi
  report "$wire" "$out/$wire.out.1"
  [[ $wire == stdio ]] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
done

echo
echo "toolport: ${TOOLPORT_BIN:-$root/build/toolport}; tree $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' + uncommitted changes')"
echo "instructions per tools/call ($tool, $calls calls after $warmup):"
for wire in stateful stateless stdio; do
  [[ -n "${result[$wire]:-}" ]] || continue
  line="  $(printf '%-10s %9d' "$wire" "${result[$wire]}")"
  [[ $wire == stateless && -n "${result[stateful]:-}" ]] &&
    line+="  ($(awk -v a="${result[stateless]}" -v b="${result[stateful]}" 'BEGIN {printf "%.2f", a / b}')x stateful)"
  echo "$line"
done
