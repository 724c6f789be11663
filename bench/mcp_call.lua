-- wrk script for bench/run_http_bench.sh: POSTs a tools/call of one tool (no arguments) over
-- Streamable HTTP inside an existing session, every request with a unique JSON-RPC id.
-- Environment: MCP_SESSION_ID (required), MCP_TOOL (default test_simple_text), MCP_ARGS (the
-- arguments as JSON, default {}), MCP_AUTHORIZATION (an Authorization header value, e.g.
-- "Bearer <token>", for a server that requires one).
local session = os.getenv("MCP_SESSION_ID") or error("set MCP_SESSION_ID")
local tool = os.getenv("MCP_TOOL") or "test_simple_text"
local args = os.getenv("MCP_ARGS") or "{}"

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = session
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
local authorization = os.getenv("MCP_AUTHORIZATION") or ""
if authorization ~= "" then wrk.headers["Authorization"] = authorization end

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

local counter = 0
function request()
  counter = counter + 1
  local body = string.format(
    '{"jsonrpc":"2.0","id":"%d-%d","method":"tools/call","params":{"name":"%s","arguments":%s}}',
    thread_id or 0, counter, tool, args)
  return wrk.format(nil, nil, nil, body)
end
