// Trace export settings on the real binary: the `telemetry:` section and the OTEL_*
// variables as `toolport config check` and `toolport serve` read them, their refusals
// (file, line and key, or the variable), and a server exporting to a live OTLP receiver
// (lib/otlp_receiver.mjs) starting and stopping cleanly without ever showing the headers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runToolport, serverForTest, startHttpServer, assertAlive, post, INIT_PARAMS } from './lib/harness.mjs';
import { startOtlpReceiver } from './lib/otlp_receiver.mjs';

// The OTEL_* variables of this process must not leak into the binary's: each test sets its own.
const CLEAN = Object.fromEntries(Object.keys(process.env).filter((k) => k.startsWith('OTEL_')).map((k) => [k, '']));

function writeConfig(t, text) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-telemetry-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'toolport.yaml');
  writeFileSync(file, text);
  return file;
}

describe('telemetry settings', () => {
  it('config check says where traces go, from the file and the variables over it', async (t) => {
    const file = writeConfig(t, 'telemetry:\n  endpoint: http://collector.example:4318\n  traces:\n    sampler: always_on\n');
    const fromFile = await runToolport(['config', 'check', file], { env: CLEAN });
    assert.equal(fromFile.status, 0, fromFile.stderr);
    assert.match(fromFile.stdout, /traces: application\/x-protobuf to http:\/\/collector\.example:4318\/v1\/traces, sampler always_on\n/);
    const overridden = await runToolport(['config', 'check', file], {
      env: {
        ...CLEAN,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otel.example/ingest?key=SECRETQUERY',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_EXPORTER_OTLP_HEADERS: 'api-key=SECRETHEADER',
      },
    });
    assert.equal(overridden.status, 0, overridden.stderr);
    assert.match(overridden.stdout, /traces: application\/json to https:\/\/otel\.example\/ingest, sampler parentbased_traceidratio 0\.25\n/);
    assert.doesNotMatch(overridden.stdout + overridden.stderr, /SECRET/);
    const disabled = await runToolport(['config', 'check', file], { env: { ...CLEAN, OTEL_SDK_DISABLED: 'true' } });
    assert.match(disabled.stdout, /traces: not exported \(disabled\)\n/);
  });

  it('refuses what it cannot use, naming the file, line and key or the variable', async (t) => {
    const file = writeConfig(t, 'telemetry:\n  traces:\n    sampler_arg: 2\n');
    const bad = await runToolport(['config', 'check', file], { env: CLEAN });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /toolport\.yaml:3: telemetry\.traces\.sampler_arg: must be between 0 and 1/);
    const empty = writeConfig(t, 'server:\n  name: x\n');
    const grpc = await runToolport(['config', 'check', empty], {
      env: { ...CLEAN, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
    });
    assert.equal(grpc.status, 2);
    assert.match(grpc.stderr, /environment variable OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not supported/);
    const serve = await runToolport(['serve', '--listen', '127.0.0.1:0', '--packs', 'conformance'], {
      env: { ...CLEAN, OTEL_BSP_MAX_QUEUE_SIZE: 'lots' },
      timeoutMs: 10000,
    });
    assert.equal(serve.status, 2, serve.stderr);
    assert.match(serve.stderr, /environment variable OTEL_BSP_MAX_QUEUE_SIZE must be an integer from 1 to 10000000, got \\?"lots\\?"/);
  });

  it('a server exporting to a live receiver serves, never logs the headers, and stops cleanly', async (t) => {
    const receiver = await startOtlpReceiver();
    t.after(() => receiver.close());
    const server = await serverForTest(t, {
      env: { ...CLEAN, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_HEADERS: 'api-key=SECRETHEADER' },
    });
    assert.match(server.logs(), new RegExp(`telemetry: exporting traces to ${receiver.tracesUrl.replace(/[.]/g, '\\.')} \\(http/protobuf, sampler parentbased_always_on\\)`));
    const res = await post(server, { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS() });
    assert.equal(res.status, 200);
    assertAlive(server);
    const exited = new Promise((resolve) => server.child.once('exit', (code, signal) => resolve({ code, signal })));
    server.child.kill('SIGTERM');
    assert.deepEqual(await exited, { code: 0, signal: null });
    assert.doesNotMatch(server.logs(), /SECRETHEADER/);
  });

  it('a collector that is down does not keep the server from starting or stopping', async (t) => {
    const server = await startHttpServer({ env: { ...CLEAN, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' } });
    t.after(() => server.stop());
    const res = await post(server, { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS() });
    assert.equal(res.status, 200);
    const exited = new Promise((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});
