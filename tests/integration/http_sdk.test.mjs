// The official MCP TypeScript SDK client over Streamable HTTP (/mcp) and the legacy
// HTTP+SSE transport (GET /sse + POST /messages).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  startHttpServer,
  assertAlive,
  post,
  LATEST,
  instrumentTransport,
  assertProgressOnWire,
} from './lib/harness.mjs';

describe('SDK client over Streamable HTTP', () => {
  let server;
  let client;
  let transport;
  let wire;
  const errors = [];
  const logMessages = [];
  const samplingRequests = [];

  before(async () => {
    server = await startHttpServer();
    transport = new StreamableHTTPClientTransport(new URL(server.url));
    client = new Client({ name: 'toolport-it-http', version: '1.0.0' }, { capabilities: { sampling: {} } });
    client.onerror = (e) => errors.push(e);
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logMessages.push(n.params);
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      samplingRequests.push(req.params);
      return {
        model: 'integration-test-model',
        role: 'assistant',
        content: { type: 'text', text: `http-echo<${req.params.messages[0].content.text}>` },
      };
    });
    await client.connect(transport);
    wire = instrumentTransport(transport);
  });

  after(async () => {
    await client?.close().catch(() => {});
    await server?.stop();
  });

  it('connects with a session id and the latest revision', () => {
    assert.equal(typeof transport.sessionId, 'string');
    assert.match(transport.sessionId, /^[\x21-\x7e]{16,}$/, 'a visible-ASCII session id with enough entropy');
    assert.equal(transport.protocolVersion, LATEST);
    assert.equal(client.getServerVersion()?.name, 'toolport');
  });

  it('lists tools', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ['test_simple_text', 'test_tool_with_progress', 'test_sampling', 'test_elicitation']) {
      assert.ok(names.includes(n), `${n} missing`);
    }
  });

  it('calls test_simple_text', async () => {
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.deepEqual(result.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
  });

  it('streams progress notifications (SSE response) and returns the token', async () => {
    const progress = [];
    const result = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    assertProgressOnWire(wire, { progress, result });
  });

  it('streams log notifications on the POST response stream', async () => {
    await client.setLoggingLevel('info');
    logMessages.length = 0;
    const result = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    assert.equal(result.content[0].text, 'Tool with logging executed successfully');
    assert.deepEqual(
      logMessages.map((m) => m.data),
      ['Tool execution started', 'Tool processing data', 'Tool execution completed'],
    );
  });

  it('round-trips sampling/createMessage over HTTP', async () => {
    samplingRequests.length = 0;
    const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Say hi' } });
    assert.equal(samplingRequests.length, 1);
    assert.equal(samplingRequests[0].messages[0].content.text, 'Say hi');
    assert.deepEqual(result.content, [{ type: 'text', text: 'LLM response: http-echo<Say hi>' }]);
  });

  it('reads a resource and a prompt', async () => {
    const { contents } = await client.readResource({ uri: 'test://static-text' });
    assert.equal(contents[0].text, 'This is the content of the static text resource.');
    const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'x', arg2: 'y' } });
    assert.equal(prompt.messages[0].content.text, "Prompt with arguments: arg1='x', arg2='y'");
  });

  it('answers ping', async () => {
    assert.deepEqual(await client.ping(), {});
  });

  it('saw no transport errors', () => {
    assert.deepEqual(
      errors.map((e) => String(e)),
      [],
    );
  });

  it('terminateSession() ends the session: the old id then gets 404', async () => {
    const oldId = transport.sessionId;
    assert.ok(oldId);
    await transport.terminateSession();
    assert.equal(transport.sessionId, undefined);
    const res = await post(server, { jsonrpc: '2.0', id: 1, method: 'ping' }, { sessionId: oldId, protocolVersion: LATEST });
    assert.equal(res.status, 404, res.text);
    const res2 = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { sessionId: oldId, protocolVersion: LATEST });
    assert.equal(res2.status, 404, res2.text);
    assertAlive(server);
  });
});

describe('SDK client over legacy HTTP+SSE', () => {
  let server;
  let client;

  before(async () => {
    server = await startHttpServer();
    client = new Client({ name: 'toolport-it-sse', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new SSEClientTransport(new URL(`${server.base}/sse`)));
  });

  after(async () => {
    await client?.close().catch(() => {});
    await server?.stop();
  });

  it('connects', () => {
    assert.equal(client.getServerVersion()?.name, 'toolport');
    assert.ok(client.getServerCapabilities()?.tools);
  });

  it('lists tools', async () => {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'test_simple_text'));
    assert.ok(tools.some((t) => t.name === 'test_error_handling'));
  });

  it('calls a tool', async () => {
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.deepEqual(result.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
    const failing = await client.callTool({ name: 'test_error_handling', arguments: {} });
    assert.equal(failing.isError, true);
  });

  it('reads a templated resource', async () => {
    const { contents } = await client.readResource({ uri: 'test://template/7/data' });
    assert.equal(JSON.parse(contents[0].text).id, '7');
  });

  it('rejects a POST /messages for an unknown session with 404', async () => {
    const res = await post(server, { jsonrpc: '2.0', id: 1, method: 'ping' }, { path: '/messages?sessionId=00000000000000000000000000000000' });
    assert.equal(res.status, 404, res.text);
  });
});
