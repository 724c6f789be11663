// The official MCP TypeScript SDK client drives `toolport serve --stdio --packs conformance`.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { TOOLPORT_BIN, LATEST, instrumentTransport, assertProgressOnWire } from './lib/harness.mjs';

const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

describe('SDK client over stdio', () => {
  let client;
  let transport;
  let stderr = '';
  const logMessages = [];
  let wire;
  let negotiated;
  const samplingRequests = [];
  const elicitationRequests = [];

  before(async () => {
    transport = new StdioClientTransport({
      command: TOOLPORT_BIN,
      args: ['serve', '--stdio', '--packs', 'conformance'],
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d) => {
      stderr += d;
      if (stderr.length > 20000) stderr = stderr.slice(-20000);
    });
    client = new Client(
      { name: 'toolport-it-stdio', version: '1.0.0' },
      { capabilities: { sampling: {}, elicitation: { form: {} } } },
    );
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logMessages.push(n.params);
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      samplingRequests.push(req.params);
      const prompt = req.params.messages[0].content.text;
      return {
        model: 'integration-test-model',
        role: 'assistant',
        content: { type: 'text', text: `echo<${prompt}>` },
        stopReason: 'endTurn',
      };
    });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      elicitationRequests.push(req.params);
      return { action: 'accept', content: { response: 'forty-two' } };
    });
    // The client hands the negotiated revision to transports that want it.
    transport.setProtocolVersion = (version) => {
      negotiated = version;
    };
    await client.connect(transport);
    wire = instrumentTransport(transport);
  });

  after(async () => {
    const pid = transport?.pid;
    await client?.close();
    if (pid) {
      try {
        process.kill(pid, 0);
        process.kill(pid, 'SIGKILL'); // still there after close(): make sure it goes
      } catch {
        /* already gone */
      }
    }
  });

  it('negotiates the latest protocol revision and reports server info', () => {
    assert.equal(client.getServerVersion()?.name, 'toolport');
    const caps = client.getServerCapabilities();
    assert.ok(caps.tools, 'tools capability');
    assert.ok(caps.resources, 'resources capability');
    assert.ok(caps.prompts, 'prompts capability');
    assert.ok(caps.logging, 'logging capability');
    assert.ok(caps.completions, 'completions capability');
    assert.equal(negotiated, LATEST);
    assert.ok(transport.pid > 0);
  });

  it('lists tools including the conformance tools', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const expected of [
      'test_simple_text',
      'test_image_content',
      'test_tool_with_progress',
      'test_error_handling',
      'test_sampling',
      'test_elicitation',
      'json_schema_2020_12_tool',
    ]) {
      assert.ok(names.includes(expected), `${expected} missing from ${names.join(', ')}`);
    }
    const simple = tools.find((t) => t.name === 'test_simple_text');
    assert.equal(simple.inputSchema.type, 'object');
    const schema2020 = tools.find((t) => t.name === 'json_schema_2020_12_tool');
    assert.equal(schema2020.inputSchema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  });

  it('calls test_simple_text', async () => {
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.deepEqual(result.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
    assert.notEqual(result.isError, true);
  });

  it('returns image content', async () => {
    const result = await client.callTool({ name: 'test_image_content', arguments: {} });
    assert.equal(result.content.length, 1);
    assert.equal(result.content[0].type, 'image');
    assert.equal(result.content[0].mimeType, 'image/png');
    assert.equal(result.content[0].data, PNG_1X1);
  });

  it('reports progress three times and returns the progress token', async () => {
    const progress = [];
    const result = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    assertProgressOnWire(wire, { progress, result });
  });

  it('delivers log notifications from test_tool_with_logging', async () => {
    await client.setLoggingLevel('debug');
    logMessages.length = 0;
    const result = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    assert.equal(result.content[0].text, 'Tool with logging executed successfully');
    assert.equal(logMessages.length, 3, JSON.stringify(logMessages));
    assert.deepEqual(
      logMessages.map((m) => m.level),
      ['info', 'info', 'info'],
    );
    assert.deepEqual(
      logMessages.map((m) => m.data),
      ['Tool execution started', 'Tool processing data', 'Tool execution completed'],
    );
  });

  it('honours logging/setLevel: error level suppresses info messages', async () => {
    await client.setLoggingLevel('error');
    logMessages.length = 0;
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    assert.deepEqual(logMessages, []);
    await client.setLoggingLevel('debug');
  });

  it('returns isError for a failing tool', async () => {
    const result = await client.callTool({ name: 'test_error_handling', arguments: {} });
    assert.equal(result.isError, true);
    assert.equal(result.content[0].type, 'text');
    assert.match(result.content[0].text, /intentionally returns an error/);
  });

  it('rejects an unknown tool with a JSON-RPC error', async () => {
    await assert.rejects(client.callTool({ name: 'no_such_tool_anywhere', arguments: {} }), (e) => {
      assert.ok(e instanceof McpError, String(e));
      assert.equal(e.code, -32602);
      return true;
    });
  });

  it('reads test://static-text', async () => {
    const { contents } = await client.readResource({ uri: 'test://static-text' });
    assert.deepEqual(contents, [
      { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
    ]);
  });

  it('reads test://static-binary as a blob', async () => {
    const { contents } = await client.readResource({ uri: 'test://static-binary' });
    assert.equal(contents.length, 1);
    assert.equal(contents[0].mimeType, 'image/png');
    assert.equal(contents[0].blob, PNG_1X1);
  });

  it('lists resources and templates', async () => {
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    for (const uri of ['test://static-text', 'test://static-binary', 'test://watched-resource']) {
      assert.ok(uris.includes(uri), `${uri} missing from ${uris.join(', ')}`);
    }
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.ok(resourceTemplates.some((t) => t.uriTemplate === 'test://template/{id}/data'));
  });

  it('reads a templated resource test://template/42/data', async () => {
    const { contents } = await client.readResource({ uri: 'test://template/42/data' });
    assert.equal(contents.length, 1);
    assert.equal(contents[0].uri, 'test://template/42/data');
    assert.equal(contents[0].mimeType, 'application/json');
    const body = JSON.parse(contents[0].text);
    assert.equal(body.id, '42');
    assert.equal(body.templateTest, true);
  });

  it('answers an unknown resource with an error', async () => {
    await assert.rejects(client.readResource({ uri: 'test://does-not-exist' }), McpError);
  });

  it('lists and gets prompts', async () => {
    const { prompts } = await client.listPrompts();
    const names = prompts.map((p) => p.name);
    for (const n of ['test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource', 'test_prompt_with_image']) {
      assert.ok(names.includes(n), `${n} missing`);
    }
    const withArgs = prompts.find((p) => p.name === 'test_prompt_with_arguments');
    assert.deepEqual(
      withArgs.arguments.map((a) => [a.name, a.required]),
      [
        ['arg1', true],
        ['arg2', true],
      ],
    );

    const simple = await client.getPrompt({ name: 'test_simple_prompt' });
    assert.deepEqual(simple.messages, [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }]);

    const got = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'alpha', arg2: 'beta' } });
    assert.equal(got.messages.length, 1);
    assert.equal(got.messages[0].role, 'user');
    assert.equal(got.messages[0].content.text, "Prompt with arguments: arg1='alpha', arg2='beta'");
  });

  it('rejects getPrompt with a missing required argument (-32602)', async () => {
    await assert.rejects(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'only' } }), (e) => {
      assert.equal(e.code, -32602);
      return true;
    });
  });

  it('round-trips sampling/createMessage through the client', async () => {
    samplingRequests.length = 0;
    const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'What is 2+2?' } });
    assert.equal(samplingRequests.length, 1);
    assert.equal(samplingRequests[0].messages[0].role, 'user');
    assert.equal(samplingRequests[0].messages[0].content.text, 'What is 2+2?');
    assert.equal(typeof samplingRequests[0].maxTokens, 'number');
    assert.deepEqual(result.content, [{ type: 'text', text: 'LLM response: echo<What is 2+2?>' }]);
  });

  it('round-trips elicitation/create through the client', async () => {
    elicitationRequests.length = 0;
    const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Your answer?' } });
    assert.equal(elicitationRequests.length, 1);
    assert.equal(elicitationRequests[0].message, 'Your answer?');
    assert.equal(elicitationRequests[0].requestedSchema.type, 'object');
    assert.deepEqual(result.content, [
      { type: 'text', text: 'User response: action=accept, content={"response":"forty-two"}' },
    ]);
  });

  it('answers ping', async () => {
    const pong = await client.ping();
    assert.deepEqual(pong, {});
  });

  it('answers completion/complete for a prompt argument', async () => {
    const result = await client.complete({
      ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'a' },
    });
    assert.ok(result.completion, JSON.stringify(result));
    assert.ok(Array.isArray(result.completion.values), JSON.stringify(result));
    for (const v of result.completion.values) assert.equal(typeof v, 'string');
  });

  it('rejects completion/complete for an unknown prompt (-32602)', async () => {
    await assert.rejects(
      client.complete({ ref: { type: 'ref/prompt', name: 'nope_not_a_prompt' }, argument: { name: 'x', value: '' } }),
      (e) => {
        assert.equal(e.code, -32602);
        return true;
      },
    );
  });

  it('wrote its logs to stderr only (stdout stayed JSON-RPC)', () => {
    // Any non-JSON line on stdout would have failed the SDK's parser and the calls above.
    assert.match(stderr, /serving MCP on stdio/);
  });
});
