// End-to-end with a REAL claude lead (`claude -p`, Overseer over stdio through the built
// `overseer mcp`) and a real claude child, both scripted by the fake Anthropic API: the child asks
// for the person's approval (who: "person"); the lead's client cancels the form (-p mode cancels
// every elicitation), its wait_for_agents shows the request awaiting the person, and its respond
// is refused; the person answers with the built CLI and the child gets the decision.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startFakeAnthropic, type ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeBin, claudeEnv, makeTempDir, runClaude } from '../helpers/claude.js';
import { lastResult } from '../helpers/steps.js';
import { runOverseer } from '../helpers/overseerCli.js';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

test('a real claude lead is refused a person-only approval; the person\'s CLI answer reaches the real claude child', async () => {
  const seen: Record<string, ToolResultInfo> = {};
  let jobId = '';
  let item: any;
  const fake = await startFakeAnthropic({
    scripts: {
      lead: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__spawn_agent', input: { prompt: '@script:spender', title: 'GPU buyer' } }] };
        if (ctx.step === 1) {
          jobId = JSON.parse(lastResult(ctx).text).job_id;
          return { tools: [{ name: 'mcp__overseer__wait_for_agents', input: { job_ids: [jobId], timeout_s: 60 } }] };
        }
        if (ctx.step === 2) {
          seen.wait = lastResult(ctx);
          item = JSON.parse(seen.wait.text).attention[0];
          return { tools: [{ name: 'mcp__overseer__respond', input: { request_id: item?.request_id ?? 'none', decision: 'approved', comment: 'surely fine' } }] };
        }
        if (ctx.step === 3) {
          seen.respond = lastResult(ctx);
          return { tools: [{ name: 'mcp__overseer__wait_for_agents', input: { job_ids: [jobId], timeout_s: 120 } }] };
        }
        if (ctx.step === 4) {
          seen.done = lastResult(ctx);
          return { text: 'the person decided' };
        }
        return { text: 'done' };
      },
      spender: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__request_approval', input: { summary: 'buy 3 GPU hours', who: 'person', timeout_s: 120 } }] };
        if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__finish', input: { result: `got: ${lastResult(ctx).text.slice(0, 400)}` } }] };
        return { text: 'done' };
      },
    },
  });
  cleanups.push(() => fake.close());
  const dir = await makeTempDir('ovs-person-lead');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const home = join(dir, 'state');
  const env = { ...claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), OVERSEER_HOME: home, CLAUDE_BIN: claudeBin() };
  const mcpConfig = { mcpServers: { overseer: { type: 'stdio', command: process.execPath, args: [join(process.cwd(), 'dist/cli/main.js'), 'mcp'], env: { OVERSEER_HOME: home } } } };
  const lead = runClaude(['-p', '@script:lead', '--output-format', 'stream-json', '--verbose', '--mcp-config', JSON.stringify(mcpConfig), '--strict-mcp-config',
    '--permission-mode', 'dontAsk', '--allowedTools', 'mcp__overseer__*', '--max-turns', '10'], { cwd: dir, env, timeoutMs: 240_000 });
  lead.catch(() => undefined);

  await fake.waitForRequest((r) => r.script === 'lead' && r.step === 3, 120_000);
  assert.ok(item, `the lead's wait returned the request: ${seen.wait?.text}`);
  assert.deepEqual([item.kind, item.job_id, item.who, item.awaiting, item.agent_title], ['approval', jobId, 'person', 'person', 'GPU buyer']);
  assert.equal(seen.respond?.is_error, true, seen.respond?.text);
  assert.match(seen.respond!.text, new RegExp(`forbidden: Request ${item.request_id} is for the person .*nothing was changed.*overseer respond ${item.request_id}`));
  const db = new Database(join(home, 'state.db'), { readonly: true });
  cleanups.push(() => { db.close(); });
  const row = () => db.prepare('SELECT status, decision, comment, answered_by FROM requests WHERE id = ?').get(item.request_id) as any;
  assert.equal(row().status, 'pending', 'the cancelled form and the refused respond left it open for the person');

  const cli = await runOverseer(home, ['respond', item.request_id, '--approve', '--comment', 'yes, KIWI-9', '--as-person']);
  assert.equal(cli.code, 0, cli.stderr);
  const run = await lead;
  assert.equal(run.code, 0, run.stderr.slice(-2000));
  const done = JSON.parse(seen.done!.text);
  assert.equal(done.done[0].status, 'succeeded', seen.done!.text);
  const got = JSON.parse(done.done[0].result.replace(/^got: /, ''));
  assert.deepEqual([got.decision, got.comment, got.answered_by], ['approved', 'yes, KIWI-9', 'person (cli, --as-person)']);
  assert.deepEqual(row(), { status: 'answered', decision: 'approved', comment: 'yes, KIWI-9', answered_by: 'person (cli, --as-person)' });
});
