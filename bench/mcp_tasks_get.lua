-- wrk script for bench/run_replicas_bench.sh: POSTs tasks/get of one task inside an existing
-- session (a 2025-11-25 session that declared the tasks extension), every request with a
-- unique JSON-RPC id. Environment: MCP_SESSION_ID, MCP_TASK_ID (both required).
local session = os.getenv("MCP_SESSION_ID") or error("set MCP_SESSION_ID")
local task = os.getenv("MCP_TASK_ID") or error("set MCP_TASK_ID")

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = session
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"

local counter = 0
function request()
  counter = counter + 1
  local body = string.format('{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":"%s"}}', counter, task)
  return wrk.format(nil, nil, nil, body)
end
