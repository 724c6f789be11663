// Driver for bench/run_gateway_callgrind.sh: opens one MCP session on a Streamable HTTP endpoint,
// makes WARMUP sequential tools/call, runs the ZERO command (callgrind's `zero` through vgdb),
// makes CALLS more on the same keep-alive connection, then runs the DUMP command. Every reply is
// checked (HTTP 200, the expected text, not an error), so a count never includes a failed call.
//   node callgrind_drive.mjs URL TOOL WARMUP CALLS EXPECTED_TEXT 'ZERO COMMAND' 'DUMP COMMAND'
// Only Node's own modules: no npm install needed.
import http from "node:http";
import { execSync } from "node:child_process";

const [url, tool, warmup, calls, expected, zeroCommand, dumpCommand] = process.argv.slice(2);
const version = "2025-11-25";
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const target = new URL(url);

function post(body, session) {
    const headers = {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": version,
    };
    if (session) headers["Mcp-Session-Id"] = session;
    return new Promise((resolve, reject) => {
        const request = http.request(
            { host: target.hostname, port: target.port, path: target.pathname, method: "POST", agent, headers },
            (response) => {
                const chunks = [];
                response.on("data", (chunk) => chunks.push(chunk));
                response.on("end", () =>
                    resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks).toString() }),
                );
            },
        );
        request.on("error", reject);
        request.end(JSON.stringify(body));
    });
}

const init = await post({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "callgrind", version: "1" } },
});
const session = init.headers["mcp-session-id"];
if (init.status !== 200 || !session) throw new Error(`initialize failed: ${init.status} ${init.body}`);
await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session);

let id = 1;
async function callMany(count) {
    for (let i = 0; i < count; i++) {
        const reply = await post(
            { jsonrpc: "2.0", id: id++, method: "tools/call", params: { name: tool, arguments: {} } },
            session,
        );
        if (reply.status !== 200 || !reply.body.includes(expected) || reply.body.includes('"isError":true')) {
            throw new Error(`call ${id - 1}: unexpected reply ${reply.status} ${reply.body}`);
        }
    }
}

await callMany(Number(warmup));
execSync(zeroCommand, { stdio: "inherit" });
await callMany(Number(calls));
execSync(dumpCommand, { stdio: "inherit" });
agent.destroy();
