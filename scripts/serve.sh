#!/usr/bin/env bash
# Installs what is missing, builds Toolport and serves MCP on embedded defaults
# (Streamable HTTP at http://127.0.0.1:8080/mcp).
#
# With no arguments it serves the `context` pack on the example pattern library and
# project of examples/ (copied once to build/examples, so notes and sessions the agent
# writes do not touch the repository), plus the `tango` pack when TANGO_API_KEY is set.
# With arguments, they go to `toolport serve` as they are.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" build -DCMAKE_BUILD_TYPE=Release -DTOOLPORT_BUILD_TESTS=OFF
if [[ $# -eq 0 ]]; then
  examples=$root/build/examples
  [[ -d $examples ]] || cp -r "$root/examples" "$examples"
  export TOOLPORT_CONTEXT_PATTERNS=${TOOLPORT_CONTEXT_PATTERNS:-$examples/patterns}
  export TOOLPORT_CONTEXT_PROJECTS=${TOOLPORT_CONTEXT_PROJECTS:-$examples/projects}
  packs=context
  [[ -n ${TANGO_API_KEY:-} ]] && packs=context,tango
  echo "serving the $packs pack(s); patterns in $TOOLPORT_CONTEXT_PATTERNS, projects in $TOOLPORT_CONTEXT_PROJECTS" >&2
  set -- --packs "$packs"
fi
exec "$root/build/toolport" serve "$@"
