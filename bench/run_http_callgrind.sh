#!/usr/bin/env bash
# Instructions per directly served tools/call, counted by callgrind: deterministic where CPU time
# on a shared machine is not, and it says where the instructions go. `toolport serve --packs
# conformance` runs under `valgrind --tool=callgrind` and serves test_simple_text on three wires,
# one after the other:
#   stateful   Streamable HTTP in a session (initialize, 2025-11-25), one keep-alive connection;
#   stateless  Streamable HTTP in the 2026-07-28 revision (no session; _meta and Mcp-Method /
#              Mcp-Name on every call), one keep-alive connection;
#   stdio      `serve --stdio`, one line per call.
# bench/callgrind_drive.mjs makes CALLGRIND_WARMUP sequential calls, zeroes the counters
# (`vgdb --pid P zero`), makes CALLGRIND_CALLS more and dumps (`vgdb ... dump`): the dump holds
# those calls only, with no start-up or shutdown, and its total over CALLGRIND_CALLS is the
# figure printed. (bench/run_gateway_callgrind.sh does the same through a gateway.)
#
#   bench/run_http_callgrind.sh                    # about a minute; TOOLPORT_BIN (default build/toolport)
# Knobs (environment): CALLGRIND_CALLS (2000), CALLGRIND_WARMUP (200), CALLGRIND_TOP (25: the
#   functions listed per wire, by their own instructions), CALLGRIND_OUT (a directory to keep
#   the profiles in, for callgrind_annotate [--inclusive=yes] FILE; default: removed at the end),
#   CALLGRIND_ONLY (stateful, stateless or stdio: measure that one alone), CALLGRIND_CONFIG (a
#   toolport.yaml the server reads, e.g. one that turns the audit log on).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench="$root/bench"
script=run_http_callgrind.sh
workdir=http-callgrind
source "$bench/callgrind_setup.sh"

valgrind_cmd=(valgrind --tool=callgrind)
config_args=()
[[ -n "${CALLGRIND_CONFIG:-}" ]] && config_args=(--config "$CALLGRIND_CONFIG")
for wire in stateful stateless stdio; do
  [[ -z "${CALLGRIND_ONLY:-}" || "$CALLGRIND_ONLY" == "$wire" ]] || continue
  if [[ $wire == stdio ]]; then
    command_json=$("$NODE" -e 'console.log(JSON.stringify(process.argv.slice(1)))' "${valgrind_cmd[@]}" \
      "--callgrind-out-file=$out/$wire.out" "$bin" serve --stdio --packs conformance --log-level warn ${config_args[@]+"${config_args[@]}"})
    "$NODE" "$bench/callgrind_drive.mjs" stdio "$command_json" "$tool" "$warmup" "$calls" "$expected_text" \
      "vgdb --pid={pid} zero >/dev/null" "vgdb --pid={pid} dump >/dev/null" 2> "$tmp/$wire.log"
  else
    port=$(free_port)
    "${valgrind_cmd[@]}" --callgrind-out-file="$out/$wire.out" "$bin" serve --packs conformance \
      --listen "127.0.0.1:$port" --log-level warn ${config_args[@]+"${config_args[@]}"} 2> "$tmp/$wire.log" &
    pid=$!
    pids+=("$pid")
    wait_ready "$pid" "$port" "the server" "$tmp/$wire.log"
    "$NODE" "$bench/callgrind_drive.mjs" "$wire" "http://127.0.0.1:$port/mcp" "$tool" "$warmup" "$calls" \
      "$expected_text" "vgdb --pid=$pid zero >/dev/null" "vgdb --pid=$pid dump >/dev/null"
  fi
  report "$wire" "$out/$wire.out.1"
  [[ $wire == stdio ]] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
done

echo
print_build
echo "instructions per tools/call ($tool, $calls calls after $warmup):"
for wire in stateful stateless stdio; do
  [[ -n "${result[$wire]:-}" ]] || continue
  line="  $(printf '%-10s %9d' "$wire" "${result[$wire]}")"
  [[ $wire == stateless && -n "${result[stateful]:-}" ]] &&
    line+="  ($(awk -v a="${result[stateless]}" -v b="${result[stateful]}" 'BEGIN {printf "%.2f", a / b}')x stateful)"
  echo "$line"
done
