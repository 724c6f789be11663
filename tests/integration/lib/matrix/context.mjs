// The real-client matrix's case table (lib/client_matrix.mjs) for the context pack on a copy of
// examples/: every tool listed and called, success and documented error paths, by the SDK 1.x and
// 2.x clients, the Inspector CLI and toolport list/call.
// client_matrix_context_{http,stdio}.test.mjs run it over each transport (a file each, so that each
// stays well inside the per-file timeout).
import { ROOT } from '../client_matrix.mjs';
import { cpSync } from 'node:fs';
import path from 'node:path';

const RLS = 'database/rls-policy-generator';
const CONTEXT_CASES = [
  { tool: 'searchPatterns', args: { keyword: 'backoff retry' }, expect: 'ok', inspector: true },
  { tool: 'searchPatterns', args: { category: 'cooking' }, expect: { code: 'CATEGORY_INVALID' }, inspector: true },
  // An invented argument name is refused, not ignored (defect 2).
  { tool: 'searchPatterns', args: { query: 'retry' }, expect: { code: 'INVALID_ARGUMENT' } },
  { tool: 'loadSkill', args: { skillId: RLS, includeCode: true }, expect: 'ok' },
  // A unique bare name is enough (defect 9).
  { tool: 'loadSkill', args: { skillId: 'rls-policy-generator' }, expect: 'ok' },
  { tool: 'loadSkill', args: { skillId: 'database/no-such-pattern' }, expect: { code: 'PATTERN_NOT_FOUND' }, inspector: true },
  { tool: 'loadSkill', args: { skillId: '../../etc/passwd' }, expect: { code: 'VALIDATION_ERROR' } },
  { tool: 'executeSkill', args: { skillId: RLS, input: { table: 'sessions' } }, expect: 'ok', inspector: true },
  { tool: 'executeSkill', args: { skillId: RLS, input: { table: 'sessions; DROP TABLE users' } }, expect: { code: 'VALIDATION_ERROR' } },
  { tool: 'executeSkill', args: { skillId: 'database/keyset-pagination', input: {} }, expect: { code: 'SKILL_NOT_FOUND' } },
  {
    tool: 'extractPattern',
    args: (ctx) => ({
      name: `matrix-${ctx.tag}`,
      category: 'backend',
      description: 'Retries an idempotent request with exponential backoff.',
      documentation: '## Overview\n\nRetries with exponential backoff and jitter.\n',
      code: 'export function retry(input) { return input; }',
      language: 'javascript',
      quality: { correctness: 9, reusability: 8, documentation: 8, testCoverage: 7, performance: 9 },
    }),
    expect: 'ok',
  },
  {
    tool: 'extractPattern',
    args: { name: 'half-baked', category: 'backend', description: 'Not ready.', documentation: '# Half baked', quality: { correctness: 6, reusability: 5, documentation: 4, testCoverage: 3, performance: 7 } },
    expect: { code: 'VALIDATION_ERROR' },
  },
  { tool: 'listProjects', args: {}, expect: 'ok', inspector: true },
  { tool: 'searchArtifacts', args: { keyword: 'token bucket', project: 'demo-app' }, expect: 'ok' },
  { tool: 'loadSession', args: { project: 'demo-app', sessionId: '2025-10-15-authentication-flow' }, expect: 'ok' },
  { tool: 'loadSession', args: { project: 'demo-app', sessionId: '2020-01-01-nothing' }, expect: { code: 'SESSION_NOT_FOUND' } },
  { tool: 'getSessionCode', args: { project: 'demo-app', sessionId: '2025-10-15-authentication-flow', language: 'sql' }, expect: 'ok' },
  {
    tool: 'saveSession',
    args: (ctx) => ({ project: 'demo-app', sessionId: `2025-11-20-matrix-${ctx.tag}`, title: 'Matrix run', summary: 'Saved by the client matrix.' }),
    expect: 'ok',
  },
  { tool: 'addNote', args: (ctx) => ({ projectPath: ctx.project, type: 'blocker', content: `matrix ${ctx.tag}` }), expect: 'ok' },
  { tool: 'addNote', args: (ctx) => ({ project: ctx.project, type: 'rumour', content: 'x' }), expect: { code: 'VALIDATION_ERROR' } },
  // A project outside the projects root is refused (defect 9: one way to address a project).
  { tool: 'addNote', args: { project: '/etc', type: 'blocker', content: 'x' }, expect: { code: 'VALIDATION_ERROR' } },
  { tool: 'getBlockers', args: (ctx) => ({ project: ctx.project }), expect: 'ok' },
  { tool: 'getDecisions', args: (ctx) => ({ project: ctx.project }), expect: 'ok' },
  { tool: 'getHypotheses', args: (ctx) => ({ project: ctx.project }), expect: 'ok' },
  { tool: 'getCompressionRatio', args: (ctx) => ({ projectPath: ctx.project, aggregate: true }), expect: 'ok' },
  { tool: 'getPatternReuse', args: { patternId: RLS }, expect: 'ok' },
];

export const source = {
  name: 'context',
  packs: 'context',
  world: (dir) => {
    cpSync(path.join(ROOT, 'examples'), path.join(dir, 'examples'), { recursive: true });
    return { project: path.join(dir, 'examples/projects/demo-app') };
},
  config: (_fixtures, dir) =>
    `packs:\n  context:\n    patterns_root: ${dir}/examples/patterns\n    projects_root: ${dir}/examples/projects\n    index_file: ${dir}/cache/index.sqlite\n`,
  cases: CONTEXT_CASES,
};
