// Issue 31: a gateway passes an upstream's tool result content on as the bytes it came in
// (protocol/raw_json.hpp), without reading it into a document and writing it again. What
// the client reads is the same JSON either way; these tests see the bytes themselves (the
// upstream's member order, spaces and escapes, a number beyond 64 bits), and check that what
// the gateway does read is still read: an error result is labelled, an older client still
// gets the result shaped for its revision, and a cached result is the same result.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { initializeSession, post, startHttpServer, waitFor } from './lib/harness.mjs';
import { NODE, yamlString } from './lib/gateway_setup.mjs';
import { VERBATIM_CONTENT, VERBATIM_STRUCTURED, VERBATIM_UPSTREAM } from './lib/verbatim_upstream.mjs';

describe('a gateway passes result content on as it came', () => {
  let server;

  before(async () => {
    server = await startHttpServer({
      packs: 'conformance',
      config: [
        'upstreams:',
        '  raw:',
        `    command: [${yamlString(NODE)}, ${yamlString(VERBATIM_UPSTREAM)}]`,
        'sources:',
        '  raw: {cache: {mode: read_only}}',  // the verbatim tool is read-only: cached
        '',
      ].join('\n'),
    });
  });
  after(async () => {
    await server?.stop();
  });

  async function call(session, name, id) {
    const res = await post(
      server,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } },
      { sessionId: session.sessionId, protocolVersion: session.protocolVersion },
    );
    assert.equal(res.status, 200, res.text);
    return res;
  }

  async function ready(session) {
    await waitFor('the upstream', async () => {
      const res = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
      return res.messages[0]?.result?.tools?.some((t) => t.name === 'verbatim');
    });
  }

  it('writes the upstream content and structuredContent byte for byte, and adds its own _meta', async () => {
    const session = await initializeSession(server);
    await ready(session);
    const first = await call(session, 'verbatim', 10);
    assert.ok(first.text.includes(`"content":${VERBATIM_CONTENT}`), first.text);
    assert.ok(first.text.includes(`"structuredContent":${VERBATIM_STRUCTURED}`), first.text);
    const result = first.messages[0].result;
    assert.equal(result.content[0].text, 'café "quoted" 😀');
    assert.deepEqual(result.structuredContent.list, [true, null]);
    assert.equal(result._meta.cache_status, 'miss');
    assert.equal(typeof result._meta.duration_ms, 'number');
    // The upstream's own _meta members go on; its accounting is replaced by the gateway's.
    assert.equal(result._meta['verbatim/note'], 'kept');
    assert.notEqual(result._meta.duration_ms, 0.123456);
    // The size the gateway accounts is that of what the client got, _meta aside (the
    // upstream's too): the text from "content" to the end, "_meta" being written first.
    const { _meta, ...rest } = result;
    assert.ok(first.text.indexOf('"_meta":') < first.text.indexOf('"content":'), first.text);
    const written = first.text.slice(first.text.indexOf('"content":') - 1, first.text.lastIndexOf('}}'));
    assert.equal(_meta.response_size_bytes, written.length + 1, `${written} ${JSON.stringify(rest)}`);

    // From the cache (which stored that text): the same result.
    const again = await call(session, 'verbatim', 11);
    const cached = again.messages[0].result;
    assert.equal(cached._meta.cache_status, 'hit', again.text);
    assert.deepEqual(cached.content, result.content);
    assert.deepEqual(cached.structuredContent, result.structuredContent);
  });

  it('still reads an error result: it is labelled with the upstream and the tool', async () => {
    const session = await initializeSession(server);
    await ready(session);
    const res = await call(session, 'failing', 20);
    const result = res.messages[0].result;
    assert.equal(result.isError, true, res.text);
    const texts = result.content.map((c) => c.text);
    assert.equal(texts[0], 'the verbatim upstream failed on purpose', res.text);
    // Read and added to: the code and suggestion a client acts on, naming upstream and tool.
    assert.match(texts[1], /^UPSTREAM_TOOL_ERROR: upstream raw reported a failure of its tool failing/, res.text);
    assert.equal(result._meta['toolport/error'].error_code, 'UPSTREAM_TOOL_ERROR', res.text);
  });

  it('still shapes the result for an older client: no structuredContent before 2025-06-18', async () => {
    const session = await initializeSession(server, '2025-03-26');
    await ready(session);
    const res = await call(session, 'verbatim', 30);
    const result = res.messages[0].result;
    assert.equal(result.structuredContent, undefined, res.text);
    assert.equal(result.content[0].text, 'café "quoted" 😀');
  });
});
