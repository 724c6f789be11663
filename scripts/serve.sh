#!/usr/bin/env bash
# Installs what is missing, builds Toolport and serves MCP on embedded defaults
# (Streamable HTTP at http://127.0.0.1:8080/mcp). Extra arguments go to `toolport serve`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" build -DCMAKE_BUILD_TYPE=Release -DTOOLPORT_BUILD_TESTS=OFF
exec "$root/build/toolport" serve "$@"
