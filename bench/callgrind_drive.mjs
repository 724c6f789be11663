// Driver for bench/run_http_callgrind.sh and bench/run_gateway_callgrind.sh: makes WARMUP sequential tools/call of TOOL, runs the
// ZERO command (callgrind's `zero` through vgdb), makes CALLS more, then runs the DUMP command.
// Every reply is checked (the expected text, not an error), so a count never includes a failed
// call. Three wires:
//   stateful URL   Streamable HTTP, `initialize` then calls in its session (2025-11-25), one
//                  keep-alive connection;
//   stateless URL  Streamable HTTP, the 2026-07-28 revision: no session, every call carries its
//                  _meta (protocol version, client info and capabilities) and the Mcp-Method /
//                  Mcp-Name headers, one keep-alive connection;
//   stdio COMMAND  spawns COMMAND (a JSON array: the server under valgrind), `initialize` and
//                  calls as lines on its stdin; ZERO and DUMP get `{pid}` replaced by its pid.
//   node callgrind_drive.mjs WIRE TARGET TOOL WARMUP CALLS EXPECTED_TEXT 'ZERO' 'DUMP'
// Only Node's own modules: no npm install needed.
import http from "node:http";
import { execSync, spawn } from "node:child_process";
import readline from "node:readline";

const [wire, target, tool, warmup, calls, expected, zeroCommand, dumpCommand] = process.argv.slice(2);
const clientInfo = { name: "callgrind", version: "1" };
let id = 0;
let send; // (message, isRequest) => Promise<reply text>
let pid;
let finish = () => {};

function check(reply, n) {
    if (!reply.includes(expected) || reply.includes('"isError":true') || reply.includes('"error":')) {
        throw new Error(`call ${n}: unexpected reply ${reply}`);
    }
}

if (wire === "stateful" || wire === "stateless") {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const url = new URL(target);
    const version = wire === "stateful" ? "2025-11-25" : "2026-07-28";
    let session;
    const post = (body, extra = {}) => {
        const headers = {
            "Content-Type": "application/json",
            Accept: "application/json, text/event-stream",
            "MCP-Protocol-Version": version,
            ...extra,
        };
        if (session) headers["Mcp-Session-Id"] = session;
        return new Promise((resolve, reject) => {
            const request = http.request(
                { host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent, headers },
                (response) => {
                    const chunks = [];
                    response.on("data", (chunk) => chunks.push(chunk));
                    response.on("end", () => {
                        const text = Buffer.concat(chunks).toString();
                        if (response.statusCode !== 200 && response.statusCode !== 202) {
                            reject(new Error(`HTTP ${response.statusCode}: ${text}`));
                        }
                        resolve({ headers: response.headers, text });
                    });
                },
            );
            request.on("error", reject);
            request.end(JSON.stringify(body));
        });
    };
    if (wire === "stateful") {
        const init = await post({
            jsonrpc: "2.0",
            id: id++,
            method: "initialize",
            params: { protocolVersion: version, capabilities: {}, clientInfo },
        });
        session = init.headers["mcp-session-id"];
        if (!session) throw new Error(`initialize gave no session: ${init.text}`);
        await post({ jsonrpc: "2.0", method: "notifications/initialized" });
        send = async (params) =>
            (await post({ jsonrpc: "2.0", id: id++, method: "tools/call", params })).text;
    } else {
        const meta = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientInfo": clientInfo,
            "io.modelcontextprotocol/clientCapabilities": {},
        };
        send = async (params) =>
            (
                await post(
                    { jsonrpc: "2.0", id: id++, method: "tools/call", params: { ...params, _meta: meta } },
                    { "Mcp-Method": "tools/call", "Mcp-Name": params.name },
                )
            ).text;
    }
    finish = () => agent.destroy();
} else if (wire === "stdio") {
    const [command, ...args] = JSON.parse(target);
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
    pid = child.pid;
    const waiting = new Map();
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
        const message = JSON.parse(line);
        const resolve = waiting.get(message.id);
        if (resolve) {
            waiting.delete(message.id);
            resolve(line);
        }
    });
    const request = (method, params) =>
        new Promise((resolve) => {
            const n = id++;
            waiting.set(n, resolve);
            child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: n, method, params }) + "\n");
        });
    const init = await request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo });
    if (!init.includes('"result"')) throw new Error(`initialize failed: ${init}`);
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    send = (params) => request("tools/call", params);
    finish = () => {
        child.stdin.end();
        return new Promise((resolve) => child.on("exit", resolve));
    };
} else {
    throw new Error(`unknown wire ${wire}`);
}

async function callMany(count) {
    for (let i = 0; i < count; i++) check(await send({ name: tool, arguments: {} }), id);
}

const withPid = (command) => command.replaceAll("{pid}", String(pid));
await callMany(Number(warmup));
execSync(withPid(zeroCommand), { stdio: "inherit" });
await callMany(Number(calls));
execSync(withPid(dumpCommand), { stdio: "inherit" });
await finish();
