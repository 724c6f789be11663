-- wrk script for bench/run_http_bench.sh: POSTs a tools/call of one tool (no arguments) over
-- Streamable HTTP, every request with a unique JSON-RPC id. Two wires:
-- - in an existing session (MCP_SESSION_ID set), revision 2025-11-25;
-- - without MCP_SESSION_ID, the stateless 2026-07-28 revision: the version, client info and
--   capabilities in each request's _meta, the method and tool name mirrored in Mcp-Method /
--   Mcp-Name.
-- Environment: MCP_SESSION_ID, MCP_TOOL (default test_simple_text), MCP_ARGS (the arguments as
-- JSON, default {}), MCP_AUTHORIZATION (an Authorization header value, e.g. "Bearer <token>",
-- for a server that requires one).
local session = os.getenv("MCP_SESSION_ID") or ""
local tool = os.getenv("MCP_TOOL") or "test_simple_text"
local args = os.getenv("MCP_ARGS") or "{}"
local stateless = session == ""

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
local meta = ""
if stateless then
  wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
  wrk.headers["Mcp-Method"] = "tools/call"
  wrk.headers["Mcp-Name"] = tool
  meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":' ..
    '{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}'
else
  wrk.headers["Mcp-Session-Id"] = session
  wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
end
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
    '{"jsonrpc":"2.0","id":"%d-%d","method":"tools/call","params":{"name":"%s","arguments":%s%s}}',
    thread_id or 0, counter, tool, args, meta)
  return wrk.format(nil, nil, nil, body)
end
