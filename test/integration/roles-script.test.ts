// Integration: a script's agent() takes role (issue 31 point 4), on a real hub whose children are
// scripted in process (test/helpers/fakeLauncher.ts): the CLI is told the role — a planner's plan
// mode, a read-only tree for the confinement, the tools a custom role denies — its first prompt
// carries the role's instructions, the job stores it; an unknown role fails the call with the
// refusal's message before any job exists.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { settingsDirOf } from '../../src/config.js';
import type { SpawnCmd } from '../../src/launch/types.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { argValue, ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { count, jobs } from '../helpers/state.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

test('agent(prompt, { role }) — planner, reviewer, a custom role — reaches the CLI, the prompt and the job; an unknown role fails the call', async () => {
  const seen = new Map<string, { prompt: string; cmd: SpawnCmd }>();
  const fake = new ScriptedLauncher((prompt, cmd) => { seen.set(/TASK:(\w+)/.exec(prompt)?.[1] ?? '?', { prompt, cmd }); return { resultText: 'ok' }; });
  const h = await startTestHub({ processes: fake });
  hubs.push(h);
  const roles = join(settingsDirOf(h.hub.ctx.config), 'roles');
  mkdirSync(roles, { recursive: true });
  writeFileSync(join(roles, 'nofetch.md'), '---\ndenied_tools: [WebFetch, WebSearch]\n---\nNever browse.\n');
  const r = await h.call('run_script', {
    script: `const a = await agent('TASK:plan it', { role: 'planner' })
const b = await agent('TASK:review it', { role: 'reviewer' })
const c = await agent('TASK:build it', { role: 'nofetch' })
const d = await agent('TASK:plain it')
let refused = ''
try { await agent('TASK:bad it', { role: 'auditor' }) } catch (e) { refused = e.message }
return { refused }`,
  });
  const v = await eventually('run ended', async () => { const x = await h.hub.scripts.view(r.run_id); return x && x.status !== 'running' ? x : undefined; }, 30_000);
  assert.equal(v.status, 'succeeded', JSON.stringify(v));
  assert.match((v.result as { refused: string }).refused, /unknown role "auditor": known roles: implementer, reviewer, planner, nofetch/);
  const args = (t: string): string[] => seen.get(t)!.cmd.args;
  assert.equal(argValue(args('plan'), '--permission-mode'), 'plan');
  assert.equal(argValue(args('review'), '--permission-mode'), 'default');
  assert.equal(argValue(args('plain'), '--permission-mode'), 'default');
  assert.equal(seen.get('plan')!.cmd.readOnlyTree, true);
  assert.equal(seen.get('review')!.cmd.readOnlyTree, true);
  assert.equal(seen.get('build')!.cmd.readOnlyTree, undefined);
  assert.equal(seen.get('plain')!.cmd.readOnlyTree, undefined);
  const denied = args('build').slice(args('build').indexOf('--disallowedTools') + 1);
  assert.ok(denied.includes('WebFetch') && denied.includes('WebSearch'), args('build').join(' '));
  assert.match(seen.get('plan')!.prompt, /## Your role: planner/);
  assert.match(seen.get('review')!.prompt, /## Your role: reviewer/);
  assert.match(seen.get('build')!.prompt, /## Your role: nofetch\n\nYou may not use: WebFetch, WebSearch\.\n\nNever browse\./);
  assert.doesNotMatch(seen.get('plain')!.prompt, /Your role/);
  const rows = await jobs(h.hub, { limit: 100 });
  assert.deepEqual(rows.map((j) => j.role ?? null).sort(), ['implementer', 'nofetch', 'planner', 'reviewer']);
  assert.equal(await count(h.hub, sql`SELECT COUNT(*) AS n FROM jobs`), 4, 'the refused call made no job');
});
