// End-to-end: mixed crews of REAL claude and REAL codex children. (1) A real lead `claude -p`
// talks to `overseer mcp` (dist/, over stdio) and fans out one claude child and one codex child
// (provider "codex") that both write their files; the Codex settings reach the hub through the
// lead's environment (OVERSEER_CODEX_*, CODEX_BIN). (2) A workflow whose implementer is claude and
// whose reviewer is codex: the codex reviewer's verdict is the JSON of its final message
// (--output-schema). Needs `npm run build` for (1).
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { claudeBin, claudeEnv } from '../helpers/claude.js';
import { codexBin, codexTempBase, FAKE_API_KEY, makeTempDir } from '../helpers/codex.js';
import { initRepo } from '../helpers/git.js';
import { cwdOf } from '../helpers/steps.js';
import { settled } from '../helpers/workflow.js';
import { fakeModelCatalog, startFakeOpenAI, type CodexScript, type FakeOpenAI } from '../../src/fakemodel/fakeOpenAI.js';
import { startFakeAnthropic, type FakeAnthropic, type Script, type Step } from '../../src/fakemodel/fakeAnthropic.js';
import { jobIdsIn } from '../../src/fakemodel/demoScripts.js';
import { job } from '../helpers/state.js';

const MODEL = 'fake-model';
const REPO_ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const cleanups: (() => Promise<void>)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

const mcp = (tool: string, args: Record<string, unknown>) => ({ mcp: { server: 'overseer', tool, args } });

async function openaiWith(scripts: Record<string, CodexScript>): Promise<{ openai: FakeOpenAI; catalog: string; dir: string }> {
  const openai = await startFakeOpenAI({ scripts });
  cleanups.push(() => openai.close());
  const dir = await makeTempDir('ovs-cx', codexTempBase());
  const catalog = join(dir, 'models.json');
  writeFileSync(catalog, JSON.stringify(fakeModelCatalog([MODEL])));
  return { openai, catalog, dir };
}

describe('mixed crews', () => {
  test('a real claude lead over stdio fans out a claude child and a codex child; both write their files', async () => {
    const anthropic: FakeAnthropic = await startFakeAnthropic({
      scripts: {
        'crew-lead': (ctx) => {
          if (ctx.step === 0) {
            return {
              text: 'Fanning out to a claude and a codex agent.',
              tools: [
                { name: 'mcp__overseer__spawn_agent', input: { title: 'claude writer', prompt: '@script:crew-claude create claude.txt' } },
                { name: 'mcp__overseer__spawn_agent', input: { title: 'codex writer', prompt: '@script:crew-codex create codex.txt', provider: 'codex' } },
              ],
            };
          }
          if (ctx.step === 1) {
            const ids = jobIdsIn(ctx);
            if (ids.length !== 2) return { text: `spawn failed: ${ctx.lastToolResults.map((r) => r.text).join(' | ').slice(0, 2000)}` };
            return { tools: [{ name: 'mcp__overseer__wait_for_agents', input: { job_ids: ids, mode: 'all', timeout_s: 240 } }] };
          }
          return { text: `crew finished: ${ctx.lastToolResults.at(-1)?.text.slice(0, 3000) ?? ''}` };
        },
        'crew-claude': (ctx) => {
          if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), 'claude.txt'), content: 'written by claude\n' } }] };
          if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__finish', input: { result: 'claude wrote claude.txt' } }] };
          return { text: 'done' };
        },
      },
    });
    cleanups.push(() => anthropic.close());
    const { openai, catalog, dir } = await openaiWith({
      'crew-codex': [
        { calls: [{ patch: '*** Begin Patch\n*** Add File: codex.txt\n+written by codex\n*** End Patch\n' }] },
        { calls: [mcp('finish', { result: 'codex wrote codex.txt' })] },
        { text: 'done' },
      ],
    });
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const repo = await initRepo(join(dir, 'repo'), { 'README.md': '# crew\n' });
    const state = join(dir, 'state');
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true });
    const mainJs = join(REPO_ROOT, 'dist', 'cli', 'main.js');
    assert.ok(existsSync(mainJs), 'run `npm run build` first');

    const env = claudeEnv({
      home,
      baseUrl: anthropic.url,
      extra: {
        OVERSEER_HOME: state,
        OVERSEER_CODEX_PROVIDER: JSON.stringify({ base_url: openai.url, env_key: 'FAKE_API_KEY', request_max_retries: 0, stream_max_retries: 0 }),
        OVERSEER_CODEX_MODEL: MODEL,
        OVERSEER_CODEX_MODEL_CATALOG: catalog,
        CODEX_BIN: codexBin(),
        CLAUDE_BIN: claudeBin(),
        FAKE_API_KEY,
      },
    });
    for (const k of Object.keys(env)) if (k.startsWith('OPENAI_') || (k.startsWith('CODEX_') && k !== 'CODEX_BIN')) delete env[k];
    const mcpConfig = { mcpServers: { overseer: { type: 'stdio', command: process.execPath, args: [mainJs, 'mcp'], env: { OVERSEER_HOME: state } } } };
    const args = ['-p', '@script:crew-lead fan out a mixed crew', '--output-format', 'stream-json', '--verbose', '--mcp-config', JSON.stringify(mcpConfig),
      '--strict-mcp-config', '--permission-mode', 'dontAsk', '--allowedTools', 'mcp__overseer__*', '--max-turns', '8'];
    const lead = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(claudeBin(), args, { cwd: repo, env, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
    });
    assert.equal(lead.code, 0, `${lead.stderr.slice(-2000)}\n${lead.stdout.slice(-3000)}`);

    assert.equal(readFileSync(join(repo, 'claude.txt'), 'utf8'), 'written by claude\n');
    assert.equal(readFileSync(join(repo, 'codex.txt'), 'utf8'), 'written by codex\n');
    const db = new Database(join(state, 'state.db'), { readonly: true });
    const jobs = db.prepare('SELECT id, provider, status, parent_id, result, session_id FROM jobs ORDER BY seq').all() as
      { id: string; provider: string; status: string; parent_id: string | null; result: string; session_id: string | null }[];
    db.close();
    assert.deepEqual(jobs.map((j) => [j.provider, j.status, j.parent_id, j.result]), [
      ['claude', 'succeeded', null, 'claude wrote claude.txt'],
      ['codex', 'succeeded', null, 'codex wrote codex.txt'],
    ]);
    const codexReq = openai.requests.find((r) => r.script === 'crew-codex');
    assert.equal(jobs[1]!.session_id, codexReq?.headers['thread-id'], 'the codex job ran against the configured provider');
    const leadResult = lead.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { type: string; result?: string }).find((e) => e.type === 'result');
    assert.match(leadResult?.result ?? '', /^crew finished: .*"status":"succeeded".*"status":"succeeded"/s, 'the lead waited for both');
  });
});

// ---- a workflow with a claude implementer and a codex reviewer ----

const phaseOf = (text: string): string => /# Workflow \S+ — (assess|review|implement)/.exec(text)?.[1] ?? '?';
const structured = (input: Record<string, unknown>): Step => ({ tools: [{ name: 'StructuredOutput', input }] });

/** The claude implementer: a two-milestone plan; each implement phase writes one file and commits it. */
const implementer: Script = (ctx) => {
  const phase = phaseOf(ctx.prompt);
  if (phase === 'assess') return structured({ plan: '# Plan\n- [ ] add gamma.txt\n- [ ] add delta.txt\n', contract: 'gamma.txt and delta.txt exist' });
  if (phase !== 'implement') return { text: `claude got a ${phase} phase` };
  const milestone = /## Your milestone\n- \[ \] (.+)/.exec(ctx.prompt)?.[1] ?? '';
  const file = /add (\S+)/.exec(milestone)?.[1] ?? 'x.txt';
  if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), file), content: `${file}\n` } }] };
  if (ctx.step === 1) return { tools: [{ name: 'Bash', input: { command: `git add -A && git -c user.name=t -c user.email=t@t commit -qm "add ${file}"` } }] };
  return structured({ milestone, completed: true, summary: `added ${file}` });
};

/** The codex reviewer: looks at the tree, then answers with the verdict JSON as its final message. */
const reviewer: CodexScript = (ctx) => {
  if (phaseOf(ctx.prompt) !== 'review') return { text: `codex got a ${phaseOf(ctx.prompt)} phase` };
  const cycle = /cycle (\d+)/.exec(ctx.prompt)?.[1] ?? '?';
  if (ctx.turnStep === 0) return { calls: [{ shell: 'git log --oneline -3' }] };
  return { text: JSON.stringify({ verdict: 'approve', notes: `codex review of cycle ${cycle}: fine`, reopen: null }) };
};

describe('workflow with a codex reviewer', () => {
  test('claude implements, codex reviews with a structured verdict; the workflow succeeds', async () => {
    const { openai, catalog, dir } = await openaiWith({ wf: reviewer });
    const h: TestHub = await startTestHub({
      dir,
      scripts: { wf: implementer },
      extraEnv: { FAKE_API_KEY },
      config: {
        codexProvider: { base_url: openai.url, env_key: 'FAKE_API_KEY', request_max_retries: 0, stream_max_retries: 0 },
        codexModelCatalog: catalog, codexBin: codexBin(),
      },
    });
    cleanups.push(() => h.stop());
    const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# repo\n' });
    const s = await h.call('start_workflow', {
      task: '@script:wf add gamma.txt', cwd: repo, title: 'Mixed roles',
      implementer: { provider: 'claude' }, reviewer: { provider: 'codex', model: MODEL },
    });
    const w = await settled(h.hub, s.workflow_id, 180_000);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(w.jobs.map((j: any) => `${j.phase}:${j.cycle}`), ['assess:0', 'review:1', 'implement:1', 'review:2', 'implement:2']);
    const providers = await Promise.all(w.jobs.map(async (j: any) => { const row = await job(h.hub, j.job_id); return [j.phase, row.provider, row.model]; }));
    assert.deepEqual(providers, [['assess', 'claude', null], ['review', 'codex', MODEL], ['implement', 'claude', null], ['review', 'codex', MODEL], ['implement', 'claude', null]]);
    assert.equal(w.milestones_done, 2);
    for (const j of w.jobs.filter((x: any) => x.phase === 'review')) {
      const row = await job(h.hub, j.job_id);
      assert.equal(row.status, 'succeeded', row.error ?? '');
      assert.deepEqual(JSON.parse(row.structured_json!), { verdict: 'approve', notes: `codex review of cycle ${j.cycle}: fine`, reopen: null });
    }
    const reviews = openai.requests.filter((r) => r.script === 'wf');
    assert.ok(reviews.length >= 4, `codex made ${reviews.length} requests`);
    for (const r of reviews) {
      assert.equal(r.body.text?.format?.type, 'json_schema', 'codex was given the review schema (--output-schema)');
      assert.deepEqual(Object.keys(r.body.text.format.schema.properties).sort(), ['notes', 'reopen', 'verdict']);
    }
    const log = await h.call('read_note', { key: `workflow/${s.workflow_id}/worklog/cycle-2-review` });
    assert.match(log.value, /^verdict: approve\n\ncodex review of cycle 2: fine/);
    const plan = await h.call('read_note', { key: `workflow/${s.workflow_id}/plan` });
    assert.match(plan.value, /- \[x\] add gamma\.txt\n- \[x\] add delta\.txt/);
    const log2 = execFileSync('git', ['log', '--format=%s', `main..${w.branch}`], { cwd: repo, encoding: 'utf8' }).trim().split('\n');
    assert.deepEqual(log2, ['add delta.txt', 'add gamma.txt']);
  });
});
