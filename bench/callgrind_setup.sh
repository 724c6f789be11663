# Sourced by run_gateway_callgrind.sh and run_http_callgrind.sh after they set `script` (their
# name, for messages) and `workdir` (the temporary directory's name): the knobs both read,
# valgrind and the binary in place, wait_ready, report and print_build.
calls=${CALLGRIND_CALLS:-2000}
warmup=${CALLGRIND_WARMUP:-200}
top=${CALLGRIND_TOP:-25}
tool=test_simple_text
expected_text="This is a simple text response for testing."
die() { echo "$script: $*" >&2; exit 1; }
source "$bench/bench_setup.sh"
bench_install_missing valgrind curl node
NODE=$(command -v node)
bench_workdir "$workdir"
bin="$tmp/toolport"
cp "${TOOLPORT_BIN:-$root/build/toolport}" "$bin" || die "no toolport binary (set TOOLPORT_BIN)"
out=${CALLGRIND_OUT:-$tmp/profiles}
mkdir -p "$out"

wait_ready() {  # PID PORT WHAT LOG: until /health answers healthy (a minute: valgrind starts slowly)
  for _ in $(seq 1 600); do
    kill -0 "$1" 2>/dev/null || die "$3 exited during start-up: $(tail -5 "$4")"
    curl -s --max-time 2 "http://127.0.0.1:$2/health" 2>/dev/null | grep -q '"healthy"' && return 0
    sleep 0.1
  done
  die "$3 on port $2 never became healthy: $(tail -5 "$4")"
}

declare -A result
report() {  # NAME DUMP: instructions per call (into result[NAME]) and the top functions by their own instructions
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

print_build() {  # the binary measured and the tree it was built from
  echo "toolport: ${TOOLPORT_BIN:-$root/build/toolport}; tree $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' + uncommitted changes')"
}
