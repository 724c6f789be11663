-- wrk script: POSTs a tools/call of one tool (no arguments) over Streamable HTTP in the
-- stateless 2026-07-28 revision: no session; the version, client info and capabilities in the
-- request's _meta, and the method and tool name mirrored in Mcp-Method / Mcp-Name. Every
-- request has a unique JSON-RPC id. Environment: MCP_TOOL (default test_simple_text),
-- MCP_ARGS (the arguments as JSON, default {}).
local tool = os.getenv("MCP_TOOL") or "test_simple_text"
local args = os.getenv("MCP_ARGS") or "{}"
local version = "2026-07-28"

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = version
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = tool

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

local counter = 0
function request()
  counter = counter + 1
  local body = string.format(
    '{"jsonrpc":"2.0","id":"%d-%d","method":"tools/call","params":{"name":"%s","arguments":%s,' ..
    '"_meta":{"io.modelcontextprotocol/protocolVersion":"%s","io.modelcontextprotocol/clientInfo":' ..
    '{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}',
    thread_id or 0, counter, tool, args, version)
  return wrk.format(nil, nil, nil, body)
end
