# Sourced by the bench scripts: opens an MCP session on a Streamable HTTP endpoint with curl
# (initialize, then notifications/initialized) and prints its Mcp-Session-Id.
#   sid=$(open_mcp_session http://127.0.0.1:PORT/mcp 2025-11-25 ["Authorization: Bearer ..."])
open_mcp_session() {
  local url=$1 version=$2 hdrs sid auth=()
  [[ -n "${3:-}" ]] && auth=(-H "$3")
  for _ in $(seq 1 100); do curl -s -o /dev/null --max-time 1 "$url" && break; sleep 0.05; done
  hdrs=$(mktemp)
  curl -sS --max-time 5 -D "$hdrs" -o /dev/null -X POST "$url" ${auth[@]+"${auth[@]}"} -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    --data "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"$version\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}"
  sid=$(awk 'tolower($1) == "mcp-session-id:" {print $2}' "$hdrs" | tr -d '\r')
  rm -f "$hdrs"
  [[ -n "$sid" ]] || { echo "no MCP session from $url" >&2; return 1; }
  curl -sS -o /dev/null -X POST "$url" ${auth[@]+"${auth[@]}"} -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: $version" \
    --data '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo "$sid"
}
