// Integration: the agent tools' input validation and role rules, through a real in-process
// hub (real SQLite, real claude children against the fake API). Every bad call must come
// back as an MCP error whose text names the field / value and the fix, and must leave the
// database and the file system exactly as they were.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { makeTempDir } from '../helpers/claude.js';
import { count as countOf, rows } from '../helpers/state.js';
import { sql } from 'kysely';

const LEAD_AGENT_TOOLS = [
  'spawn_agent', 'wait_for_agents', 'get_agent', 'list_agents', 'read_agent_output',
  'cancel_agent', 'pause_agent', 'resume_agent', 'message_agent',
];

/** Everything a rejected call must not touch: job rows, attempts, events, messages, deps, dirs. */
async function snapshot(h: TestHub, extraDirs: string[] = []): Promise<string> {
  const ls = (d: string): string[] | null => (existsSync(d) ? readdirSync(d).sort() : null);
  return JSON.stringify({
    jobs: await rows(h.hub, sql`SELECT id, seq, parent_id, status, title, prompt, cwd, work_dir, worktree, branch, priority, max_turns,
      budget_usd, timeout_s, checks_json, labels_json, depends_on_json, resume_message, status_message, result, error,
      failure_class, outcome, ended_at FROM jobs ORDER BY seq`),
    attempts: await rows(h.hub, sql`SELECT job_id, n, status FROM attempts ORDER BY job_id, n`),
    events: await rows(h.hub, sql`SELECT COUNT(*) AS c, MAX(id) AS m FROM events`),
    messages: await rows(h.hub, sql`SELECT COUNT(*) AS c, MAX(id) AS m FROM messages`),
    deps: await rows(h.hub, sql`SELECT COUNT(*) AS c FROM job_deps`),
    agentDirs: ls(join(h.home, 'agents')),
    project: ls(h.project),
    extra: extraDirs.map(ls),
  });
}

/** Calls `tool` with bad `args` on `client` and asserts: an error result, every pattern in its text, no state change. */
async function rejects(
  h: TestHub,
  tool: string,
  args: Record<string, unknown>,
  patterns: RegExp[],
  opts: { client?: Client; dirs?: string[] } = {},
): Promise<string> {
  const before = await snapshot(h, opts.dirs);
  let text: string;
  let isError: boolean | undefined;
  if (opts.client) {
    const r = await opts.client.callTool({ name: tool, arguments: args });
    isError = r.isError as boolean | undefined;
    text = (r.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
  } else {
    ({ isError, text } = await h.callRaw(tool, args));
  }
  const shown = text.length > 600 ? `${text.slice(0, 600)}…` : text;
  assert.equal(isError, true, `${tool} ${JSON.stringify(args).slice(0, 200)} should fail, got: ${shown}`);
  for (const p of patterns) assert.match(text, p, `${tool}: error text should match ${p}: ${shown}`);
  assert.ok(text.length < 20_000, `${tool}: the error text is ${text.length} characters`);
  assert.equal(await snapshot(h, opts.dirs), before, `${tool} ${JSON.stringify(args).slice(0, 200)} changed state although it failed: ${shown}`);
  return text;
}

async function toolNames(c: Client): Promise<string[]> {
  return (await c.listTools()).tools.map((t) => t.name);
}

describe('agent tools: input validation, roles, paging', { timeout: 240_000 }, () => {
  let h: TestHub;
  let plain: string;
  let jobA: string;
  let jobB: string;
  let emptyHubError: { isError?: boolean; text: string };
  let agentA: Client;

  before(async () => {
    plain = await makeTempDir('ovs-plain');
    h = await startTestHub({ scripts: { ok: [{ text: 'ok' }] } });
    emptyHubError = await h.callRaw('get_agent', { job_id: 'j-00000000' });
    jobA = (await h.call('spawn_agent', { prompt: '@script:ok agent A', title: 'A' })).job_id;
    jobB = (await h.call('spawn_agent', { prompt: '@script:ok agent B', title: 'B' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [jobA, jobB], timeout_s: 120 });
    assert.equal(w.timed_out, false);
    assert.deepEqual(w.done.map((d: { status: string }) => d.status), ['succeeded', 'succeeded'], JSON.stringify(w));
    agentA = await h.connect({ role: 'agent', jobId: jobA });
  });

  after(async () => {
    await h?.stop();
    if (plain) await rm(plain, { recursive: true, force: true });
  });

  describe('tools/list per role', () => {
    test('the lead sees every agent tool of the contract and not the agent-only ones', async () => {
      const names = await toolNames(h.client);
      for (const t of LEAD_AGENT_TOOLS) assert.ok(names.includes(t), `lead is missing ${t}: ${names.join(', ')}`);
      assert.ok(!names.includes('report_status'), 'report_status is agent-only');
      assert.ok(!names.includes('finish'), 'finish is agent-only');
    });

    test('an agent sees report_status, finish, spawn and wait, but not pause/resume', async () => {
      const names = await toolNames(agentA);
      for (const t of ['report_status', 'finish', 'spawn_agent', 'wait_for_agents', 'get_agent', 'list_agents', 'cancel_agent', 'message_agent']) {
        assert.ok(names.includes(t), `agent is missing ${t}: ${names.join(', ')}`);
      }
      assert.ok(!names.includes('pause_agent'), 'pause_agent is lead-only');
      assert.ok(!names.includes('resume_agent'), 'resume_agent is lead-only');
    });

    test('every tool has an object input schema and a description', async () => {
      const { tools } = await h.client.listTools();
      for (const t of tools) {
        assert.equal(t.inputSchema.type, 'object', t.name);
        assert.ok((t.description ?? '').length > 20, `${t.name} has no real description`);
      }
    });
  });

  describe('unknown job ids', () => {
    test('on an empty hub the message says no jobs exist yet', () => {
      assert.equal(emptyHubError.isError, true, emptyHubError.text);
      assert.match(emptyHubError.text, /j-00000000/);
      assert.match(emptyHubError.text, /no jobs exist yet/i);
    });

    test('get_agent names the bad id and lists the known ones', async () => {
      const text = await rejects(h, 'get_agent', { job_id: 'j-nope1234' }, [/not_found/, /"j-nope1234"/, /list_agents/]);
      assert.ok(text.includes(jobA) && text.includes(jobB), `known ids missing: ${text}`);
    });

    test('cancel_agent of an unknown id cancels nothing', async () => {
      const text = await rejects(h, 'cancel_agent', { job_id: 'j-nope1234' }, [/not_found/, /"j-nope1234"/]);
      assert.ok(text.includes(jobA), text);
    });

    test('wait_for_agents with one unknown id among known ones fails at once', async () => {
      const text = await rejects(h, 'wait_for_agents', { job_ids: [jobA, 'j-nope1234'], timeout_s: 30 }, [/not_found/, /"j-nope1234"/]);
      assert.ok(text.includes(jobB), text);
    });

    test('wait_for_agents with no ids says to name one', async () => {
      await rejects(h, 'wait_for_agents', { job_ids: [] }, [/job_ids/, /at least one/]);
    });
  });

  describe('spawn_agent input', () => {
    test('an agent cannot start a sub-agent outside its own work tree (absolute, .., a symlink out)', async () => {
      symlinkSync(plain, join(h.project, 'link-out'));
      try {
        for (const cwd of [plain, '..', '../..', 'link-out', `link-out/../..`]) {
          await rejects(h, 'spawn_agent', { prompt: 'escape', cwd }, [/outside your work tree/, /a sub-agent works inside its parent's tree/], { client: agentA, dirs: [plain] });
        }
      } finally {
        rmSync(join(h.project, 'link-out'));
      }
    });

    test("an agent's command checks are decided by its permission policy, before anything is stored", async () => {
      await rejects(h, 'spawn_agent', { prompt: 'x', checks: ['command:sudo touch /tmp/pwned'] }, [/permission policy does not allow/, /deny/, /Nothing was started/], { client: agentA });
      const policy = join(h.home, 'policy.json');
      writeFileSync(policy, JSON.stringify({ rules: [{ action: 'deny', tool: 'Bash', reason: 'no shell here' }], default: 'deny' }));
      try {
        await rejects(h, 'spawn_agent', { prompt: 'x', checks: ['command:echo hi > f.txt'] }, [/no shell here/], { client: agentA });
      } finally {
        rmSync(policy);
      }
    });

    test('a cwd that does not exist', async () => {
      const missing = join(plain, 'no', 'such', 'dir');
      const text = await rejects(h, 'spawn_agent', { prompt: 'do it', cwd: missing }, [/cwd/, /does not exist/, /existing directory/], { dirs: [plain] });
      assert.ok(text.includes(missing), text);
    });

    test('worktree: true in a directory outside any git repository', async () => {
      await rejects(h, 'spawn_agent', { prompt: 'do it', cwd: plain, worktree: true }, [/git/, /worktree/, new RegExp(plain.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))], { dirs: [plain] });
      assert.deepEqual(readdirSync(plain), [], 'nothing may be created in the directory');
    });

    test('an unknown dependency', async () => {
      await rejects(h, 'spawn_agent', { prompt: 'do it', depends_on: [jobA, 'j-ghost999'] }, [/"j-ghost999"/, /not_found|unknown|no agent job/i]);
    });

    for (const p of [11, -11]) {
      test(`priority ${p}`, async () => {
        await rejects(h, 'spawn_agent', { prompt: 'do it', priority: p }, [/priority/, /-10 and 10/]);
      });
    }

    test('max_turns 0', async () => {
      await rejects(h, 'spawn_agent', { prompt: 'do it', max_turns: 0 }, [/max_turns/, /at least 1/]);
    });

    test('budget_usd -1', async () => {
      await rejects(h, 'spawn_agent', { prompt: 'do it', budget_usd: -1 }, [/budget_usd/, /more than 0/]);
    });

    test('timeout_s 10^9', async () => {
      await rejects(h, 'spawn_agent', { prompt: 'do it', timeout_s: 1e9 }, [/timeout_s/, /at most 604800/]);
    });

    test('a 2 MB prompt is refused without echoing it back', async () => {
      const text = await rejects(h, 'spawn_agent', { prompt: 'x'.repeat(2 * 1024 * 1024) }, [/prompt/, /longer than 500000/, /file/]);
      assert.ok(text.length < 2000, `the error echoes the prompt (${text.length} chars)`);
    });

    test('an empty prompt and a blank one', async () => {
      await rejects(h, 'spawn_agent', { prompt: '' }, [/prompt/, /empty/]);
      await rejects(h, 'spawn_agent', { prompt: '  \n\t ' }, [/prompt/, /empty/]);
    });

    test('a missing prompt', async () => {
      await rejects(h, 'spawn_agent', { title: 'no prompt' }, [/prompt/]);
    });

    test('an unknown extra field (strict schemas)', async () => {
      await rejects(h, 'spawn_agent', { prompt: 'do it', promt: 'typo' }, [/promt/, /unrecognized|unknown/i]);
      await rejects(h, 'get_agent', { job_id: jobA, verbose: true }, [/verbose/, /unrecognized|unknown/i]);
    });

    test('branch without worktree', async () => {
      await rejects(h, 'spawn_agent', { prompt: 'do it', branch: 'feature/x' }, [/branch/, /worktree: true/]);
    });

    test('an invalid check "lint"', async () => {
      await rejects(h, 'spawn_agent', { prompt: 'do it', checks: ['lint'] }, [/"lint"/, /diff_not_empty/, /command:/]);
    });

    test('an invalid branch name "a..b"', async () => {
      await rejects(h, 'spawn_agent', { prompt: 'do it', worktree: true, branch: 'a..b' }, [/branch/, /valid git branch name/]);
    });

    test('branch names git refuses although they look plain ("HEAD", "x/.hidden", "a.lock/b") are refused at spawn', async () => {
      for (const branch of ['HEAD', 'x/.hidden', 'a.lock/b']) {
        await rejects(h, 'spawn_agent', { prompt: 'do it', worktree: true, branch }, [/branch/, /valid git branch name/, new RegExp(JSON.stringify(branch).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))]);
      }
    });

    test('an unknown provider value', async () => {
      await rejects(h, 'spawn_agent', { prompt: 'do it', provider: 'gpt' }, [/provider/, /claude/]);
    });
  });

  describe('other tools', () => {
    test('list_agents with a cursor it never gave out', async () => {
      await rejects(h, 'list_agents', { cursor: 'zzz' }, [/cursor/, /"zzz"/, /next_cursor/]);
    });

    test('list_agents with limit over the maximum', async () => {
      await rejects(h, 'list_agents', { limit: 10_000 }, [/limit/, /200/]);
    });

    test('pause_agent of an ended job', async () => {
      await rejects(h, 'pause_agent', { job_id: jobA }, [/invalid_state/, new RegExp(jobA), /succeeded/, /not running/]);
    });

    test('message_agent with empty text', async () => {
      await rejects(h, 'message_agent', { job_id: jobA, text: '' }, [/text/, /empty/]);
    });

    test('report_status and finish are refused for the lead', async () => {
      await rejects(h, 'report_status', { message: 'working' }, [/report_status/, /forbidden|not found|agent/i]);
      await rejects(h, 'finish', { result: 'done' }, [/finish/, /forbidden|not found|agent/i]);
    });
  });

  describe('an agent outside its subtree', () => {
    test('get_agent on itself works (control)', async () => {
      const r = await agentA.callTool({ name: 'get_agent', arguments: { job_id: jobA } });
      assert.ok(!r.isError, JSON.stringify(r.content));
      const s = JSON.parse((r.content as { text: string }[])[0]!.text);
      assert.equal(s.job_id, jobA);
    });

    test('get_agent of a sibling is forbidden', async () => {
      await rejects(h, 'get_agent', { job_id: jobB }, [/forbidden/, /subtree/], { client: agentA });
    });

    test('cancel_agent of a sibling is forbidden', async () => {
      await rejects(h, 'cancel_agent', { job_id: jobB }, [/forbidden/, /subtree/], { client: agentA });
      assert.equal((await h.hub.jobs.summary(jobB)).status, 'succeeded');
    });

    test('message_agent to a sibling is forbidden', async () => {
      await rejects(h, 'message_agent', { job_id: jobB, text: 'hi sibling' }, [/forbidden/, /subtree/], { client: agentA });
    });

    test('wait_for_agents on a sibling is forbidden', async () => {
      await rejects(h, 'wait_for_agents', { job_ids: [jobB], timeout_s: 5 }, [/forbidden/, /subtree/], { client: agentA });
    });

    test('list_agents of an agent shows only its own subtree', async () => {
      const r = await agentA.callTool({ name: 'list_agents', arguments: {} });
      assert.ok(!r.isError, JSON.stringify(r.content));
      const page = JSON.parse((r.content as { text: string }[])[0]!.text);
      assert.deepEqual(page.agents, []);
    });
  });

  describe('list_agents paging', () => {
    test('limit 2 with next_cursor visits each of 5 jobs exactly once', async () => {
      const spawned: string[] = [];
      for (let i = 0; i < 5; i++) {
        spawned.push((await h.call('spawn_agent', { prompt: `@script:ok page job ${i}`, title: `page ${i}`, labels: ['paging'] })).job_id);
      }
      const w = await h.call('wait_for_agents', { job_ids: spawned, timeout_s: 180 });
      assert.equal(w.timed_out, false);

      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor: string | null = null;
      for (let guard = 0; guard < 10; guard++) {
        const args: Record<string, unknown> = { label: 'paging', limit: 2 };
        if (cursor) args.cursor = cursor;
        const page: { agents: { job_id: string }[]; next_cursor: string | null } = await h.call('list_agents', args);
        sizes.push(page.agents.length);
        seen.push(...page.agents.map((a: { job_id: string }) => a.job_id));
        cursor = page.next_cursor;
        if (!cursor) break;
      }
      assert.deepEqual(sizes, [2, 2, 1]);
      assert.deepEqual(seen, spawned, 'each job once, oldest first');

      // Unfiltered paging covers the whole table exactly once too.
      const all: string[] = [];
      cursor = null;
      for (let guard = 0; guard < 20; guard++) {
        const page: { agents: { job_id: string }[]; next_cursor: string | null } = await h.call('list_agents', cursor ? { limit: 2, cursor } : { limit: 2 });
        assert.ok(page.agents.length <= 2);
        all.push(...page.agents.map((a: { job_id: string }) => a.job_id));
        cursor = page.next_cursor;
        if (!cursor) break;
      }
      const count = await countOf(h.hub, sql`SELECT COUNT(*) AS n FROM jobs`);
      assert.equal(all.length, count);
      assert.equal(new Set(all).size, count);
      for (const id of [jobA, jobB, ...spawned]) assert.ok(all.includes(id), id);
    });
  });
});

describe('agent tools: state rules on queued and running jobs', { timeout: 120_000 }, () => {
  let h: TestHub;
  let running: string;
  let queued: string;
  let waiting: string;

  before(async () => {
    h = await startTestHub({ scripts: { block: [{ delayMs: 20_000, text: 'late' }] }, config: { maxAgents: 1 } });
    running = (await h.call('spawn_agent', { prompt: '@script:block hold on' })).job_id;
    queued = (await h.call('spawn_agent', { prompt: '@script:block second' })).job_id;
    waiting = (await h.call('spawn_agent', { prompt: '@script:block third', depends_on: [running] })).job_id;
    // The running child has started and is blocked in its first model request.
    await h.fake.waitForRequest((r) => r.script === 'block', 60_000);
  });

  after(async () => {
    await h?.stop();
  });

  test('the jobs are where the test needs them', async () => {
    assert.equal((await h.hub.jobs.summary(running)).status, 'running');
    assert.equal((await h.hub.jobs.summary(queued)).status, 'queued');
    assert.equal((await h.hub.jobs.summary(waiting)).status, 'waiting');
  });

  test('resume_agent of a running job', async () => {
    await rejects(h, 'resume_agent', { job_id: running, message: 'go on' }, [/invalid_state/, new RegExp(running), /already running/, /message_agent/]);
  });

  test('resume_agent of a queued job', async () => {
    await rejects(h, 'resume_agent', { job_id: queued }, [/invalid_state/, new RegExp(queued), /not started/, /queued/]);
  });

  test('resume_agent of a waiting job', async () => {
    await rejects(h, 'resume_agent', { job_id: waiting }, [/invalid_state/, new RegExp(waiting), /not started/, /waiting/]);
  });

  test('pause_agent of a queued job', async () => {
    await rejects(h, 'pause_agent', { job_id: queued }, [/invalid_state/, /queued/, /not running/]);
  });
});
