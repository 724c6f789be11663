// Toolport's OTLP trace encoding checked against the OFFICIAL OTLP definitions (the code
// @opentelemetry/otlp-transformer generates from opentelemetry-proto, pinned in
// package.json): the sample request that the unit test
// OtlpSample.TheEncodersStillWriteTheCommittedSampleRequest proves the encoders still write
// byte for byte (tests/fixtures/otlp/), decoded here field by field; and the receiver fixture
// (lib/otlp_receiver.mjs) that end-to-end trace tests export to.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeProtobuf, decodeJson, startOtlpReceiver } from './lib/otlp_receiver.mjs';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/otlp');
const protobuf = readFileSync(path.join(FIXTURES, 'sample_request.binpb'));
const json = readFileSync(path.join(FIXTURES, 'sample_request.json'), 'utf8');

const TRACE = '4b5c6d7e8fa0b1c2d3e4f5061728394a';
const SERVER_SPAN = '0112233445566778';

describe('OTLP encoding against the official definitions', () => {
  it('the protobuf sample decodes to every field written, and re-encodes to the same bytes', () => {
    const { spans, canonical } = decodeProtobuf(protobuf);
    assert.equal(canonical, true, 'the official encoder writes the decoded message with the same bytes');
    assert.equal(spans.length, 3);
    const [server, client, remote] = spans;
    assert.deepEqual(server.resource, {
      'service.name': 'toolport',
      'service.version': '0.1.0',
      'telemetry.sdk.name': 'toolport',
      'telemetry.sdk.language': 'cpp',
      'process.pid': 4242,
    });
    assert.deepEqual(server.scope, { name: 'toolport', version: '0.1.0' });
    assert.deepEqual(
      { ...server, resource: undefined, scope: undefined },
      {
        traceId: TRACE,
        spanId: SERVER_SPAN,
        parentSpanId: '',
        traceState: '',
        flags: 0x101, // sampled; "is the parent remote" known (and no)
        name: 'tools/call get_weather',
        kind: 2, // SPAN_KIND_SERVER
        startTimeUnixNano: '1764300000000000000',
        endTimeUnixNano: '1764300000012345678',
        attributes: {
          'mcp.method.name': 'tools/call',
          'gen_ai.tool.name': 'get_weather',
          'jsonrpc.request.id': '7',
          'rpc.response.status_code': -32602,
          'toolport.cache.hit': false,
          'toolport.budget.share': 0.125,
          'toolport.note': 'café \uFFFD', // the invalid byte repaired
        },
        events: [
          { name: 'validation', timeUnixNano: '1764300000000100000', attributes: {} },
          { name: 'budget.reserve', timeUnixNano: '1764300000000200000', attributes: { 'toolport.budget.reserved': 12 } },
        ],
        status: { code: 1, message: '' }, // STATUS_CODE_OK
        resource: undefined,
        scope: undefined,
      },
    );
    assert.equal(client.traceId, TRACE);
    assert.equal(client.parentSpanId, SERVER_SPAN);
    assert.equal(client.kind, 3); // SPAN_KIND_CLIENT
    assert.deepEqual(client.attributes, { 'server.address': 'api.example.test', 'server.port': 443 });
    assert.deepEqual(client.status, { code: 2, message: 'HTTP 503' }); // STATUS_CODE_ERROR
    assert.equal(remote.parentSpanId, '0415263748596a7b');
    assert.equal(remote.traceState, 'vendor=abc,other=1');
    assert.equal(remote.flags, 0x301); // sampled, parent known to be remote
    assert.equal(remote.kind, 1); // SPAN_KIND_INTERNAL
    assert.equal(remote.endTimeUnixNano, '1764300001000000001');
  });

  it('the JSON sample holds the same message as the protobuf one', () => {
    const { spans, bytes } = decodeJson(json);
    assert.ok(bytes.equals(protobuf), 'read by the official definitions, the JSON encodes to the protobuf sample');
    assert.deepEqual(spans, decodeProtobuf(protobuf).spans);
    // The OTLP JSON mapping's own rules, on the text itself.
    const span = JSON.parse(json).resourceSpans[0].scopeSpans[0].spans[0];
    assert.equal(span.traceId, TRACE, 'ids are lowercase hex, not base64');
    assert.equal(span.startTimeUnixNano, '1764300000000000000', 'fixed64 as a decimal string');
    assert.equal(span.kind, 2, 'enums as integers');
    assert.deepEqual(span.attributes[3].value, { intValue: '-32602' }, 'int64 as a decimal string');
  });
});

describe('the OTLP receiver fixture', () => {
  it('answers as scripted and keeps only the spans of accepted requests', async () => {
    const receiver = await startOtlpReceiver({ statuses: [503], retryAfter: '2' });
    try {
      const post = (body, type) =>
        fetch(receiver.tracesUrl, { method: 'POST', headers: { 'content-type': type }, body });
      const first = await post(protobuf, 'application/x-protobuf');
      assert.equal(first.status, 503);
      assert.equal(first.headers.get('retry-after'), '2');
      assert.equal(receiver.spans().length, 0);
      assert.equal((await post(json, 'application/json')).status, 200);
      const spans = await receiver.waitForSpans(3, 2000);
      assert.deepEqual(spans.map((s) => s.name), ['tools/call get_weather', 'GET', 'prompts/get']);
      const gzipped = await fetch(receiver.tracesUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
        body: gzipSync(protobuf),
      });
      assert.equal(gzipped.status, 200);
      assert.equal(receiver.spans().length, 6);
      assert.equal((await post('not protobuf at all', 'application/x-protobuf')).status, 400);
      assert.equal((await post('{}', 'text/plain')).status, 415);
      const requests = receiver.requests();
      assert.deepEqual(requests.map((r) => r.status), [503, 200, 200, 400, 415]);
      assert.equal(requests[2].contentEncoding, 'gzip');
      assert.equal(requests[2].canonical, true);
      assert.equal(requests[0].canonical, true);
      assert.match(requests[3].error, /./);
      await assert.rejects(receiver.waitForSpans(7, 100), /got 6 span\(s\), not 7/);
    } finally {
      await receiver.close();
    }
  });

  it('can answer late, or never', async () => {
    const slow = await startOtlpReceiver({ delayMs: 300 });
    const silent = await startOtlpReceiver({ hang: true });
    try {
      const post = (receiver) =>
        fetch(receiver.tracesUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf' },
          body: protobuf,
          signal: AbortSignal.timeout(2000),
        });
      const started = Date.now();
      assert.equal((await post(slow)).status, 200);
      assert.ok(Date.now() - started >= 250, 'the answer waited for the delay');
      await assert.rejects(post(silent), /timeout|aborted/i);
      assert.equal(silent.requests().length, 1, 'the request was read and decoded');
      assert.equal(silent.requests()[0].spans.length, 3);
      assert.equal(silent.spans().length, 0, 'nothing is accepted without an answer');
    } finally {
      await slow.close();
      await silent.close();
    }
  });
});
