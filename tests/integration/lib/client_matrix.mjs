// The real-client matrix (issue 29), run by the client_matrix_*.test.mjs files (one per
// source and transport; each source's case table is in lib/matrix/): every built-in source — the conformance pack, tango
// against its API fixture, context on a copy of examples/, a REST catalog (the agentpmt
// fixture), an OpenAPI document (the inventory fixture) and the gateway over the official
// server-everything — listed and called, tool by tool, success paths and documented error
// paths, by each client people use: the SDK 1.x client, the SDK 2.x client, the Inspector
// CLI 2.x and `toolport list`/`toolport call` (lib/matrix_clients.mjs); over Streamable HTTP
// and over stdio the way a host sets it up (initialize, then tools/list at once).
//
// A cell (source × client × transport) fails on:
//   - any client-side error: a schema mismatch, a protocol error, missing structured content
//     where the tool declares an outputSchema, a CLI that cannot read the answer;
//   - a first tools/list that is not the source's whole tool list (an empty one over stdio
//     is the async-source defect), or a tool no case here calls;
//   - an outcome other than the case's (success, the error code, the JSON-RPC error);
//   - an error result whose text does not carry its error code and a suggestion, or whose
//     structuredContent does not validate against the tool's outputSchema (checked here for
//     every client, with the SDK's own Ajv validator, since the CLIs do not check it).
//
// One server per source for HTTP, shared by its cells; over stdio the SDK clients start one
// server each, the CLIs one per command (as they do for a user). Each case table is the
// source's: tool, arguments, expected outcome. The Inspector CLI starts a Node process per
// call (about a second each), so it runs the cases marked `inspector: true`, a representative
// subset (the listing, then two to six cases per source: successes and the main error paths);
// the other three clients run every case.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { TOOLPORT_BIN, startHttpServer, sleep } from './harness.mjs';
import { CLIENTS } from './matrix_clients.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const validator = new AjvJsonSchemaValidator();

// A source (lib/matrix/*.mjs): {name, packs, cases, fixtures?() → {name: fixture}, config?(fixtures, dir) → YAML,
// env?(fixtures), world?(dir) → extra case context, beforeCell?(fixtures), mayAppear?: [tool]}.
// A case: {tool (name or RegExp), args (object, or (ctx) → object; ctx: tag, fixtures, world),
// expect, needs?, without?, inspector?, before?(ctx), after?(ctx)}.
// expect: 'ok' (a result without isError); {code: 'X'} (an isError result with error code X);
// 'error' (an isError result, whatever its code); {rpc: N} (a JSON-RPC error N). needs: the client capabilities the success path needs; a
// client without one gets `without` (default: a clear error result) instead.
// ------------------------------------------------------------------ checks

const textOf = (result) => (result.content ?? []).map((c) => c.text ?? '').join('\n');
// The machine-readable code of an error result: the pipeline's error_code, the context
// pack's error.code, else the "CODE:" the text starts with.
const errorCode = (result) =>
  result.structuredContent?.error_code ??
  (typeof result.structuredContent?.error === 'object' ? result.structuredContent.error.code : undefined) ??
  /^([A-Z][A-Z0-9_]{2,}):/m.exec(textOf(result))?.[1];

const describeOutcome = (o) =>
  o.kind === 'result'
    ? `${o.result.isError ? `error result ${errorCode(o.result) ?? '(no code)'}` : 'success'}: ${textOf(o.result).slice(0, 300)}`
    : `${o.kind} ${o.code ?? ''}: ${o.message}`;

// What the case expects of this client (a client without a needed capability gets a clear
// error instead of the success).
function expectationFor(kase, client) {
  const needs = [kase.needs ?? []].flat();
  if (needs.some((n) => !client.capabilities.has(n))) return kase.without ?? { anyError: true };
  return kase.expect;
}

// Returns the problems with one outcome (empty when the cell is right).
function check(kase, tool, outcome, expected) {
  if (outcome.kind === 'client-error') return [`client-side error: ${outcome.message}`];
  if (expected.rpc !== undefined) {
    if (outcome.kind === 'rpc-error' && outcome.code === expected.rpc) return [];
    return [`expected JSON-RPC error ${expected.rpc}, got ${describeOutcome(outcome)}`];
  }
  if (outcome.kind === 'rpc-error') return [`expected ${JSON.stringify(expected)}, got JSON-RPC error ${outcome.code}: ${outcome.message}`];
  const { result } = outcome;
  const problems = [];
  const schema = tool?.outputSchema;
  if (schema && result.structuredContent !== undefined) {
    const valid = validator.getValidator(schema)(result.structuredContent);
    if (!valid.valid) problems.push(`structuredContent does not match the outputSchema: ${valid.errorMessage}`);
  }
  if (schema && !result.isError && result.structuredContent === undefined) problems.push('declares an outputSchema but returned no structuredContent');
  if (result.isError) {
    const code = errorCode(result);
    const text = textOf(result);
    if (!code) problems.push(`error result without a machine-readable code: ${text.slice(0, 300)}`);
    else if (!text.includes(code)) problems.push(`error text lacks its code ${code}: ${text.slice(0, 300)}`);
    if (!/suggest/i.test(text)) problems.push(`error text lacks a suggestion: ${text.slice(0, 300)}`);
  }
  if (expected === 'error' && !result.isError) problems.push(`expected an error result, got ${describeOutcome(outcome)}`);
  if (expected === 'ok' && result.isError) problems.push(`expected success, got ${describeOutcome(outcome)}`);
  if (expected.code && (!result.isError || errorCode(result) !== expected.code)) {
    problems.push(`expected error ${expected.code}, got ${describeOutcome(outcome)}`);
  }
  if (expected.anyError && !result.isError) problems.push(`expected an error result (client lacks ${kase.needs}), got ${describeOutcome(outcome)}`);
  return problems;
}

const matches = (pattern, name) => (typeof pattern === 'string' ? pattern === name : pattern.test(name));

// ------------------------------------------------------------------ the matrix

// The cells of `source` over `transport` ('http' or 'stdio'), one per client.
export function runMatrix(source, transport) {
  describe(`client matrix: ${source.name} over ${transport}`, () => {
    let dir;
    let fixtures = {};
    let world = {};
    let configFile = null;
    let env = {};
    let http;

    before(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), `toolport-matrix-${source.name}-`));
      fixtures = source.fixtures ? await source.fixtures() : {};
      world = source.world ? source.world(dir) : {};
      env = source.env ? source.env(fixtures) : {};
      if (source.config) {
        configFile = path.join(dir, 'toolport.yaml');
        writeFileSync(configFile, source.config(fixtures, dir));
      }
    });
    after(async () => {
      await http?.stop();
      for (const fixture of Object.values(fixtures)) await fixture.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const serveArgs = () => ['--packs', source.packs, ...(configFile ? ['--config', configFile] : [])];
    const targets = {
      http: async () => {
        // One server per source, started when its first HTTP cell runs: its first client
        // meets it as a host would, right after start-up.
        if (!http) {
          http = await startHttpServer({ packs: source.packs, extraArgs: configFile ? ['--config', configFile] : [], env });
        }
        return { url: http.url };
      },
      stdio: async () => ({ command: TOOLPORT_BIN, args: ['serve', '--stdio', ...serveArgs()], env }),
    };

    let cell = 0;
    for (const client of CLIENTS) {
      it(`${source.name} · ${client.name} · ${transport}`, { timeout: 300000 }, async (t) => {
        cell += 1;
        const ctx = { tag: `${client.name}-${transport}-${cell}`.replace(/[^a-z0-9-]/gi, ''), fixtures, ...world };
        if (source.beforeCell) await source.beforeCell(fixtures);
        const session = await client.open(await targets[transport]());
        try {
          // The first tools/list, as the client gets it right after initialize, must be the
          // source's whole list. When it is not, the cell has failed; the list is then asked
          // again (for up to 5 s) so that the calls still show what else a client meets.
          const label = `${source.name} · ${client.name} · ${transport}`;
          const coverage = (tools) => {
            const listed = tools.map((tool) => tool.name);
            const missing = [...new Set(source.cases.map((k) => k.tool))]
              .filter((pattern) => !listed.some((name) => matches(pattern, name)))
              .map(String);
            const uncovered = listed.filter((name) => !source.cases.some((k) => matches(k.tool, name)) && !(source.mayAppear ?? []).includes(name));
            return { listed, missing, uncovered };
          };
          let tools = await session.list();
          await t.test('first tools/list', () => {
            const { listed, missing, uncovered } = coverage(tools);
            assert.ok(listed.length > 0, `${label}: the first tools/list is empty`);
            assert.deepEqual(missing, [], `${label}: the first tools/list lacks tools (${listed.length} listed: ${listed.join(', ')})`);
            assert.deepEqual(uncovered, [], `${label}: listed tools without a case in the matrix`);
          });
          // (A CLI over stdio starts a new server for every command: asking again proves nothing.)
          const canWait = transport === 'http' || !client.processPerCommand;
          for (const deadline = Date.now() + 5000; canWait && coverage(tools).missing.length > 0 && Date.now() < deadline; ) {
            await sleep(250);
            tools = await session.list();
          }

          const cases = client.subset ? source.cases.filter((k) => k.inspector) : source.cases;
          for (const kase of cases) {
            // A tool still missing from the list is called by its name all the same.
            const tool = tools.find((x) => matches(kase.tool, x.name)) ?? { name: String(kase.tool) };
            const args = typeof kase.args === 'function' ? kase.args(ctx) : kase.args;
            await t.test(`${tool.name} ${JSON.stringify(args).slice(0, 80)}`, async () => {
              if (kase.before) await kase.before(ctx);
              let outcome;
              try {
                outcome = await session.call(tool, tool.name, args);
              } finally {
                if (kase.after) await kase.after(ctx);
              }
              const problems = check(kase, tool, outcome, expectationFor(kase, client));
              // Every later cell then fails to connect: the first failure says why.
              if (http?.exited()) problems.push(`the server exited: ${JSON.stringify(http.exited())} (its log is printed above)`);
              assert.deepEqual(problems, [], `${label} · ${tool.name}`);
            });
          }
        } finally {
          await session.close();
        }
      });
    }
  });
}
