// How a provider limit is shown (src/limits/view.ts and its users): the floor's `limits` and the
// queued jobs' why, the status lines, the watch's rows, and the person's notification — all from
// the same line, "claude: rate limited until 16:40 — 5 agents waiting".
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildFloor, type FloorInput } from '../../src/floor/model.js';
import { readFloor } from '../../src/floor/source.js';
import { clock, floorLimit, limitLine } from '../../src/limits/view.js';
import type { LimitRow } from '../../src/limits/store.js';
import { saveLimitState } from '../../src/limits/store.js';
import { sqlOver } from '../../src/store/sql/open.js';
import { claudeAccount } from '../../src/limits/account.js';
import { onLimit, CLOSED, DEFAULT_SETTINGS } from '../../src/limits/breaker.js';
import { limitLines } from '../../src/cli/status.js';
import { buildRows, selectable } from '../../src/tui/rows.js';
import { rowLines } from '../../src/tui/screen.js';
import { limitOpened, repeatKey } from '../../src/floor/notify/payload.js';
import { desktopText, slackText } from '../../src/floor/notify/text.js';
import { openDb } from '../../src/store/db.js';
import type { JobRow } from '../../src/store/jobs.js';

const NOW = new Date(2026, 10, 28, 16, 30, 0).getTime();

function row(o: Partial<LimitRow> = {}): LimitRow {
  return {
    account: 'claude|https://api.anthropic.com|abc123abc123', provider: 'claude', endpoint: 'https://api.anthropic.com', key_hash: 'abc123abc123',
    phase: 'open', kind: 'rate_limit', status: 429, reason: 'API Error: Request rejected (429) · rate limited', opened_at: NOW - 60_000,
    until_at: new Date(2026, 10, 28, 16, 40, 0).getTime(), basis: 'retry_after', failures: 1, hits: 3, paused_json: '["j-p1","j-p2"]', updated_at: NOW, ...o,
  };
}

function job(id: string, o: Partial<JobRow> = {}): JobRow {
  return {
    id, seq: Number(id.replace(/\D/g, '')) || 1, parent_id: null, depth: 1, title: `T ${id}`, prompt: 'p', provider: 'claude', model: 'm', cwd: '/r', work_dir: null, repo_root: null,
    worktree: 0, branch: null, base_commit: null, priority: 0, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, template: null,
    checks_json: '[]', retry: 'none', labels_json: '[]', depends_on_json: '[]', status: 'queued', status_message: null, progress: null, result: null,
    outcome: null, error: null, failure_class: null, session_id: null, turns: 0, cost_usd: 0, pid: null, pr_url: null, diff_stat: null, git_note: null,
    token_hash: null, resume_message: null, created_at: NOW - 60_000, started_at: null, ended_at: null, updated_at: NOW - 60_000,
    workflow_id: null, phase: null, cycle: null, json_schema: null, structured_json: null, input_tokens: 0, output_tokens: 0, cost_unknown: 0,
    cache_read_tokens: 0, cache_creation_tokens: 0, thread_usage_json: null, lock_violations_json: null, last_event_at: null, last_activity: null, ...o,
  } as JobRow;
}

const input = (o: Partial<FloorInput>): FloorInput => ({ jobs: [], requests: [], warnings: [], workflows: [], milestones: [], locks: [], lockWaits: [], deps: [], hub: null, cap: 6, source: 'hub', ...o });

describe('the limit line', () => {
  test('"claude: rate limited until 16:40 — 5 agents waiting"; seconds when it is close; probing when its time has come', () => {
    assert.equal(limitLine('claude', 'rate_limit', 'open', new Date(2026, 10, 28, 16, 40).getTime(), 5, NOW), 'claude: rate limited until 16:40 — 5 agents waiting');
    assert.equal(limitLine('codex', 'usage_limit', 'open', NOW + 65_000, 1, NOW), 'codex: usage limit reached until 16:31:05 — 1 agent waiting');
    assert.equal(limitLine('claude', 'overloaded', 'half_open', null, 2, NOW), 'claude: overloaded — probing with one request — 2 agents waiting');
    assert.match(clock(NOW + 2 * 86_400_000, NOW), /^16:30 2026-11-30$/, 'another day says which');
  });

  test('floorLimit: queued of its provider plus the paused count as waiting; an open row past its time is probing', () => {
    const l = floorLimit(row(), 3, NOW);
    assert.equal(l.waiting, 5);
    assert.deepEqual(l.paused, ['j-p1', 'j-p2']);
    assert.equal(l.endpoint, 'api.anthropic.com');
    assert.equal(l.line, 'claude: rate limited until 16:40 — 5 agents waiting');
    const late = floorLimit(row({ until_at: NOW - 1 }), 0, NOW);
    assert.equal(late.phase, 'half_open');
    assert.equal(late.until, null);
  });
});

describe('the floor, status and watch', () => {
  test('buildFloor: the limit in `limits`, its provider\'s queued jobs wait on it (others by the cap as before), closed rows left out', () => {
    const f = buildFloor(input({
      jobs: [job('j1'), job('j2'), job('j3', { provider: 'codex' })],
      limits: [row(), row({ provider: 'codex', account: 'codex|x|y', phase: 'closed' })],
    }), NOW);
    assert.equal(f.limits?.length, 1);
    assert.equal(f.limits![0]!.line, 'claude: rate limited until 16:40 — 4 agents waiting');
    assert.deepEqual(f.queued.map((q) => q.why_waiting), [
      'waiting on the provider limit: claude: rate limited until 16:40 — 4 agents waiting',
      'waiting on the provider limit: claude: rate limited until 16:40 — 4 agents waiting',
      'starting: 0 running of 6, a slot is free',
    ]);
    assert.deepEqual(buildFloor(input({ jobs: [job('j1')] }), NOW).limits, []);
  });

  test('readFloor reads the limiter rows the hub wrote', async () => {
    const db = openDb(':memory:');
    const acct = claudeAccount({ ANTHROPIC_API_KEY: 'k', HOME: '/h' });
    await saveLimitState(sqlOver(db).db, acct, onLimit(CLOSED, { kind: 'usage_limit', status: 429, resetAt: NOW + 3_600_000, message: 'usage limit reached' }, NOW, DEFAULT_SETTINGS, 0), ['j-x'], NOW);
    const f = await readFloor(sqlOver(db).db, { now: NOW, hub: null, cap: 4, source: 'database' });
    assert.equal(f.limits?.[0]?.line, 'claude: usage limit reached until 17:30 — 1 agent waiting');
    assert.equal(f.limits?.[0]?.basis, 'reset');
    db.close();
  });

  test('status: one line per limit, first; the watch: a PROVIDER LIMITS block on top, not selectable', () => {
    const f = buildFloor(input({ jobs: [job('j1')], limits: [row()] }), NOW);
    assert.deepEqual(limitLines(f.limits), ['⏸ claude: rate limited until 16:40 — 3 agents waiting (API Error: Request rejected (429) · rate limited) — new claude agents start when it has passed']);
    const rows = buildRows(f, { filter: { words: ['nothing-matches'], labels: [], statuses: [] } });
    assert.equal(rows[0]?.kind, 'heading');
    assert.equal(rows[1]?.kind, 'limit', 'a filter does not hide the limit');
    assert.equal(selectable(rows[1]!), false);
    const [line] = rowLines(rows[1]!, NOW, 120);
    assert.match(line!.text, /^⏸ claude: rate limited until 16:40 — 3 agents waiting/);
    assert.equal(line!.tone, 'warn');
  });
});

describe('the notification', () => {
  test('limited: one per limit with the line, the provider and until; the command is overseer status', () => {
    const base = { at: '2026-11-28T16:30:00.000Z', project: 'shop', project_dir: '/w/shop' };
    const p = limitOpened(floorLimit(row(), 3, NOW), base);
    assert.equal(p.event, 'limited');
    assert.equal(p.job_id, null);
    assert.equal(p.provider, 'claude');
    assert.equal(p.until, new Date(row().until_at!).toISOString());
    assert.match(p.reason, /^claude: rate limited until 16:40 — 5 agents waiting \(API Error: Request rejected \(429\) · rate limited\); new claude agents start when it has passed/);
    assert.equal(p.command, 'overseer status');
    assert.equal(desktopText(p).title, 'Overseer shop: claude agents held by a provider limit');
    assert.match(slackText(p), /^\*shop\*: claude agents held by a provider limit — claude: rate limited/);
    assert.notEqual(repeatKey(p), repeatKey({ ...p, provider: 'codex' }), 'each provider its own');
  });
});
