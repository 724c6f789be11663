// `toolport list` and `toolport call`: the real binary as an MCP client, against
// `toolport serve --packs conformance` over Streamable HTTP, against itself over stdio,
// and in-process (--config). Exit status 0 on success, 1 when the server fails or cannot
// be reached, 2 for usage errors; every error is one line on stderr.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { TOOLPORT_BIN, startHttpServer, freePort, track } from './lib/harness.mjs';

const TOOL_COUNT = 36; // the conformance pack
const SIMPLE_TEXT = 'This is a simple text response for testing.';

// Runs `toolport ...args` to completion (killed after timeoutMs).
function runCli(args, { env = {}, timeoutMs = 20000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(TOOLPORT_BIN, args, {
        env: { ...process.env, TOOLPORT_TOKEN: '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`toolport ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

// The lines toolport itself wrote to stderr (a stdio child's own logs pass through too).
const ownErrors = (stderr) => stderr.split('\n').filter((l) => l.startsWith('toolport '));

// Asserts a failure reported as exactly one line of our own and no crash output.
function assertOneLineError(res, status, pattern) {
  assert.equal(res.code, status, `exit status; stderr:\n${res.stderr}`);
  const own = ownErrors(res.stderr);
  assert.equal(own.length, 1, `one error line, got:\n${res.stderr}`);
  assert.match(own[0], pattern);
  assert.doesNotMatch(res.stderr, /terminate called|what\(\)|Aborted|Segmentation/);
  assert.equal(res.stdout, '', 'nothing on stdout');
}

// A shell-quoted word for --stdio.
const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;
const STDIO_SERVER = `${quote(TOOLPORT_BIN)} serve --stdio --packs conformance`;

describe('toolport list / call over Streamable HTTP', () => {
  let server;
  before(async () => {
    server = await startHttpServer();
  });
  after(async () => {
    await server?.stop();
  });

  it('list --url prints one tool a line and the count', async () => {
    const res = await runCli(['list', '--url', server.url]);
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.trimEnd().split('\n');
    assert.equal(lines.length, TOOL_COUNT + 1);
    assert.equal(lines.at(-1), `${TOOL_COUNT} tools`);
    assert.ok(
      lines.some((l) => /^test_simple_text\s+Tests simple text content response$/.test(l)),
      res.stdout,
    );
    assert.equal(res.stderr, '');
  });

  it('list --json prints the tools array', async () => {
    const res = await runCli(['list', '--url', server.url, '--json']);
    assert.equal(res.code, 0, res.stderr);
    const tools = JSON.parse(res.stdout);
    assert.ok(Array.isArray(tools));
    assert.equal(tools.length, TOOL_COUNT);
    const simple = tools.find((t) => t.name === 'test_simple_text');
    assert.equal(simple.description, 'Tests simple text content response');
    assert.equal(simple.inputSchema.type, 'object');
  });

  it("call --url test_simple_text '{}' prints the text", async () => {
    const res = await runCli(['call', '--url', server.url, 'test_simple_text', '{}']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, `${SIMPLE_TEXT}\n`);
  });

  it('call --json prints the whole CallToolResult', async () => {
    const res = await runCli(['call', 'test_multiple_content_types', '--url', server.url, '--json']);
    assert.equal(res.code, 0, res.stderr);
    const result = JSON.parse(res.stdout);
    assert.deepEqual(
      result.content.map((c) => c.type),
      ['text', 'image', 'resource'],
    );
    assert.equal(result.content[1].mimeType, 'image/png');
  });

  it('call summarizes content that is not text', async () => {
    const res = await runCli(['call', '--url', server.url, 'test_multiple_content_types']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(
      res.stdout,
      'Multiple content types test:\n' +
        '[image image/png, 70 bytes]\n' +
        '[resource test://mixed-content-resource application/json, 27 bytes of text]\n',
    );
  });

  it('call passes arguments and follows a stream the server ends early', async () => {
    const args = await runCli(['call', '--url', server.url, 'json_schema_2020_12_tool', '{"name":"Ada","email":"a@b.c"}']);
    assert.equal(args.code, 0, args.stderr);
    assert.match(args.stdout, /called with: \{"email":"a@b.c","name":"Ada"\}/);
    const resumed = await runCli(['call', '--url', server.url, 'test_reconnection']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /Reconnection test completed successfully/);
  });

  it('a tool error goes to stderr with its code, exit 1', async () => {
    const res = await runCli(['call', '--url', server.url, 'test_error_handling']);
    assert.equal(res.code, 1);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^tool test_error_handling failed \[INTERNAL_ERROR\]:\nINTERNAL_ERROR: This tool intentionally returns an error/);
  });

  it('a JSON-RPC error: one line, exit 1', async () => {
    const res = await runCli(['call', '--url', server.url, 'no_such_tool', '{}']);
    assertOneLineError(res, 1, /^toolport call: the server answered with error -32602: .*no_such_tool/);
  });

  it('bad JSON arguments: one line, exit 2', async () => {
    const res = await runCli(['call', '--url', server.url, 'test_simple_text', '{"unterminated": ']);
    assertOneLineError(res, 2, /^toolport call: the arguments are not valid JSON: /);
    const notObject = await runCli(['call', '--url', server.url, 'test_simple_text', '[1, 2]']);
    assertOneLineError(notObject, 2, /^toolport call: the arguments must be a JSON object/);
  });

  it('--header adds a header; a malformed one is a usage error', async () => {
    const ok = await runCli(['call', '--url', server.url, '--header', 'X-Trace: abc', 'test_simple_text']);
    assert.equal(ok.code, 0, ok.stderr);
    const bad = await runCli(['call', '--url', server.url, '--header', 'no colon here', 'test_simple_text']);
    assertOneLineError(bad, 2, /^toolport call: --header "no colon here" must look like 'Name: value'/);
    const reserved = await runCli(['list', '--url', server.url, '--header', 'Mcp-Session-Id: x']);
    assertOneLineError(reserved, 2, /set by the MCP client itself/);
  });
});

describe('toolport list / call with bearer auth', () => {
  let server;
  before(async () => {
    server = await startHttpServer({ config: 'http:\n  bearer_tokens_env: TP_TOKENS\n', env: { TP_TOKENS: 'secret1' } });
  });
  after(async () => {
    await server?.stop();
  });

  it('--token and $TOOLPORT_TOKEN are sent as a bearer token', async () => {
    const flag = await runCli(['list', '--url', server.url, '--token', 'secret1']);
    assert.equal(flag.code, 0, flag.stderr);
    const env = await runCli(['list', '--url', server.url], { env: { TOOLPORT_TOKEN: 'secret1' } });
    assert.equal(env.code, 0, env.stderr);
  });

  it('a wrong token: one line naming HTTP 401, without the token', async () => {
    const res = await runCli(['list', '--url', server.url, '--token', 'not-the-secret']);
    assertOneLineError(res, 1, /HTTP 401/);
    assert.doesNotMatch(res.stderr, /not-the-secret/);
  });
});

describe('toolport list / call over stdio', () => {
  it('list --stdio starts the server as a child', async () => {
    const res = await runCli(['list', '--stdio', STDIO_SERVER, '--json']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(JSON.parse(res.stdout).length, TOOL_COUNT);
  });

  it('call --stdio', async () => {
    const res = await runCli(['call', '--stdio', STDIO_SERVER, 'test_simple_text', '{}']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, `${SIMPLE_TEXT}\n`);
    assert.equal(res.stderr, '', "the child's log is kept back (--verbose shows it)");
  });

  it('a child that dies: one line with its exit status, exit 1', async () => {
    const res = await runCli(['call', '--stdio', `${quote(TOOLPORT_BIN)} serve --stdio --packs no_such_pack`, 'x']);
    assertOneLineError(res, 1, /^toolport call: the server process ".*" exited with status 2$/);
  });

  it('a program that does not exist: one line, exit 1', async () => {
    const res = await runCli(['list', '--stdio', 'toolport-no-such-program --flag']);
    assertOneLineError(res, 1, /^toolport list: cannot start "toolport-no-such-program": No such file or directory$/);
  });

  it('shell syntax in --stdio is refused, never run', async () => {
    const res = await runCli(['list', '--stdio', `${STDIO_SERVER} | tee /tmp/toolport-cli-test`]);
    assertOneLineError(res, 2, /^toolport list: --stdio: unquoted '\|' at position \d+: the command is not run by a shell/);
    const unterminated = await runCli(['list', '--stdio', "echo 'oops"]);
    assertOneLineError(unterminated, 2, /unterminated single quote/);
  });
});

describe('toolport list / call in-process (--config)', () => {
  let dir;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-cli-'));
    writeFileSync(path.join(dir, 'ok.yaml'), 'packs: [conformance]\n');
    writeFileSync(path.join(dir, 'bad.yaml'), 'packs: [no_such_pack]\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('list --config builds the server in this process', async () => {
    const res = await runCli(['list', '--config', path.join(dir, 'ok.yaml')]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout.trimEnd().split('\n').at(-1), `${TOOL_COUNT} tools`);
    assert.equal(res.stderr, '', 'no start-up chatter');
  });

  it('call --config', async () => {
    const res = await runCli(['call', '--config', path.join(dir, 'ok.yaml'), 'test_simple_text']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, `${SIMPLE_TEXT}\n`);
  });

  it('a bad configuration: one line, exit 2', async () => {
    const res = await runCli(['list', '--config', path.join(dir, 'bad.yaml')]);
    assertOneLineError(res, 2, /^toolport list: configuration: .*bad\.yaml:1: packs: unknown pack "no_such_pack"/);
    const missing = await runCli(['list', '--config', path.join(dir, 'missing.yaml')]);
    assert.equal(missing.code, 2, missing.stderr);
  });
});

describe('toolport list / call: targets', () => {
  it('a dead port: one line, exit 1', async () => {
    const port = await freePort();
    const res = await runCli(['call', '--url', `http://127.0.0.1:${port}/mcp`, 'test_simple_text', '{}']);
    assertOneLineError(res, 1, new RegExp(`^toolport call: cannot connect to http://127\\.0\\.0\\.1:${port}/mcp: Connection refused$`));
  });

  it('exactly one target flag', async () => {
    const none = await runCli(['list']);
    assertOneLineError(none, 2, /give exactly one of --url, --stdio or --config/);
    const two = await runCli(['list', '--url', 'http://127.0.0.1:1/mcp', '--stdio', 'x']);
    assertOneLineError(two, 2, /give exactly one of --url, --stdio or --config/);
  });

  it('credentials in URLs and other schemes are refused with a reason', async () => {
    const creds = await runCli(['list', '--url', 'http://user:hunter2@127.0.0.1:1/mcp']);
    assertOneLineError(creds, 2, /^toolport list: --url: credentials in the URL are not accepted/);
    assert.doesNotMatch(creds.stderr, /hunter2/);
    const ftp = await runCli(['list', '--url', 'ftp://127.0.0.1/mcp']);
    assertOneLineError(ftp, 2, /^toolport list: --url: the URL must start with http:\/\/ or https:\/\//);
  });

  it('--token applies to --url only', async () => {
    const res = await runCli(['list', '--stdio', STDIO_SERVER, '--token', 't']);
    assertOneLineError(res, 2, /--token, --header, --ca-file and --legacy-sse apply to --url only/);
  });
});

// https: `toolport serve` behind a TLS terminator (as behind a load balancer) whose
// certificate a private CA signed, made with the openssl command for this run.
describe('toolport list / call / test over https', () => {
  let server;
  let relay;
  let dir;
  let url;
  before(async () => {
    server = await startHttpServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-tls-'));
    const pki = makePrivateCa(dir);
    const target = new URL(server.url);
    relay = tls.createServer({ key: pki.key, cert: pki.cert }, (socket) => {
      const upstream = net.connect(Number(target.port), '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      const end = () => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on('error', end);
      upstream.on('error', end);
      socket.on('close', end);
      upstream.on('close', end);
    });
    await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve));
    url = `https://localhost:${relay.address().port}/mcp`;
  });
  after(async () => {
    relay?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('list and call with --ca-file', async () => {
    const list = await runCli(['list', '--url', url, '--ca-file', path.join(dir, 'ca.pem')]);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stdout.trimEnd().split('\n').at(-1), `${TOOL_COUNT} tools`);
    const call = await runCli(['call', '--url', url, '--ca-file', path.join(dir, 'ca.pem'), 'test_simple_text', '{}']);
    assert.equal(call.code, 0, call.stderr);
    assert.equal(call.stdout.trim(), SIMPLE_TEXT);
  });

  it('SSL_CERT_FILE is honoured like in other OpenSSL programs', async () => {
    const res = await runCli(['list', '--url', url, '--json'], { env: { SSL_CERT_FILE: path.join(dir, 'ca.pem') } });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(JSON.parse(res.stdout).length, TOOL_COUNT);
  });

  it('an untrusted certificate: one line, exit 1', async () => {
    const res = await runCli(['list', '--url', url]);
    assertOneLineError(res, 1, /^toolport list: TLS handshake with https:\/\/localhost:\d+ failed: certificate verify failed/);
  });

  it('toolport test runs specs over https', async () => {
    const spec = path.join(import.meta.dirname, '..', 'specs', 'conformance', 'simple_text.yaml');
    const res = await runCli(['test', '--url', url, '--ca-file', path.join(dir, 'ca.pem'), spec]);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stdout, /1 passed, 0 failed/);
  });
});

// A CA and a certificate for localhost and 127.0.0.1 that it signed, made with the openssl
// command (arguments passed as they are, no shell). Returns the leaf's PEM key and chain.
function makePrivateCa(dir) {
  const openssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Toolport CLI Test CA');
  openssl('req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost');
  writeFileSync(path.join(dir, 'leaf.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem',
    '-days', '2', '-extfile', 'leaf.ext');
  return { key: readFileSync(path.join(dir, 'leaf.key')), cert: readFileSync(path.join(dir, 'leaf.pem')) };
}

// The official TypeScript SDK's Streamable HTTP server (stateful), answering requests
// either with SSE streams or, with jsonResponse, with plain JSON bodies.
async function startSdkServer({ jsonResponse }) {
  const transports = new Map();
  const deleted = [];
  const httpServer = http.createServer(async (req, res) => {
    try {
      let body;
      if (req.method === 'POST') {
        let text = '';
        for await (const chunk of req) text += chunk;
        body = JSON.parse(text);
      }
      const sid = req.headers['mcp-session-id'];
      if (req.method === 'DELETE' && sid) deleted.push(sid);
      let transport = sid ? transports.get(sid) : undefined;
      if (!transport) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: jsonResponse,
          onsessioninitialized: (id) => transports.set(id, transport),
        });
        const mcp = new McpServer({ name: 'sdk-test-server', version: '1.0.0' });
        mcp.registerTool(
          'echo',
          { description: 'Echoes its text\nSecond line of the description', inputSchema: { text: z.string() } },
          async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
        );
        await mcp.connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  });
  await new Promise((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${httpServer.address().port}/mcp`,
    deleted,
    stop: () => new Promise((resolve) => httpServer.close(resolve)),
  };
}

for (const jsonResponse of [false, true]) {
  describe(`toolport list / call against the TypeScript SDK server (${jsonResponse ? 'JSON' : 'SSE'} responses)`, () => {
    let server;
    before(async () => {
      server = await startSdkServer({ jsonResponse });
    });
    after(async () => {
      await server?.stop();
    });

    it('list', async () => {
      const res = await runCli(['list', '--url', server.url]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'echo(text)  Echoes its text\n1 tool\n');
    });

    it('call, and the session is deleted at the end', async () => {
      const before = server.deleted.length;
      const res = await runCli(['call', '--url', server.url, 'echo', '{"text": "hello"}']);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'echo: hello\n');
      assert.equal(server.deleted.length, before + 1, 'DELETE of the session');
    });

    it('invalid arguments come back as a tool error', async () => {
      const res = await runCli(['call', '--url', server.url, 'echo', '{"text": 5}']);
      assert.equal(res.code, 1);
      assert.match(res.stderr, /^tool echo failed:\n/);
    });
  });
}
