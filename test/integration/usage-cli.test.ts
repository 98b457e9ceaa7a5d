// `overseer usage` and `overseer projects` with no hub running: the state database read
// read-only. An unpriced Codex model's runs show as "unpriced" (never $0) and the totals as a
// lower bound; --json prints the report; changing a project needs the hub.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { sql } from 'kysely';
import { openSql } from '../../src/store/sql/open.js';
import { insertAttempt, insertJob } from '../../src/store/sql/jobs.js';
import { newJob } from '../helpers/budgetDb.js';
import { makeTempDir } from '../helpers/claude.js';
import { runOverseer } from '../helpers/overseerCli.js';

describe('overseer usage / projects without a hub', () => {
  let dir = '';
  after(async () => { if (dir) await rm(dir, { recursive: true, force: true }); });

  test('an unpriced Codex model is "unpriced" beside a priced Claude one; totals are a lower bound; --json is the report', async () => {
    dir = await makeTempDir('ovs-usage');
    const home = join(dir, 'state');
    const state = await openSql({ home });
    const q = state.db;
    const now = Date.now();
    await insertJob(q, newJob('j-claude', { project: 'web', model: 'claude-sonnet-4-5' }), now - 60_000);
    await insertJob(q, newJob('j-codex', { project: 'web', provider: 'codex', model: 'gpt-nobody-priced' }), now - 60_000);
    await sql`INSERT INTO projects (name, created_at) VALUES ('web', ${now - 60_000})`.execute(q);
    const attempt = async (id: string, cost: number, unknown: number): Promise<void> => {
      await insertAttempt(q, { job_id: id, n: 1, kind: 'initial', status: 'ended', started_at: now - 30_000, ended_at: now - 20_000, session_id: null, pid: null, exit_code: 0, signal: null, turns: 2, cost_usd: cost, failure_class: null, error: null, diagnosis: null, transcript: '/dev/null' });
      await sql`UPDATE attempts SET cost_unknown = ${unknown}, input_tokens = 1200, output_tokens = 300 WHERE job_id = ${id}`.execute(q);
      await sql`UPDATE jobs SET status = 'succeeded', cost_usd = ${cost}, cost_unknown = ${unknown} WHERE id = ${id}`.execute(q);
    };
    await attempt('j-claude', 0.0123, 0);
    await attempt('j-codex', 0, 1);
    await state.close();

    const text = await runOverseer(home, ['usage']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^Usage \(all projects, all time\): ≥ \$0\.0123 over 2 run\(s\) of 2 job\(s\)/);
    assert.match(text.stdout, /^codex\s+1,200\s+300\s+0\s+0\s+unpriced\s+1\s+1$/m, text.stdout);
    assert.match(text.stdout, /^claude\s+1,200\s+300\s+0\s+0\s+\$0\.0123\s+1\s+1$/m);
    assert.match(text.stdout, /^gpt-nobody-priced\s+codex\s+1,200\s+300\s+0\s+0\s+unpriced\s+1\s+1$/m);
    assert.match(text.stdout, /lower bounds/);

    const json = await runOverseer(home, ['usage', '--json', '--project', 'web', '--since', '1h']);
    assert.equal(json.code, 0, json.stderr);
    const r = JSON.parse(json.stdout);
    assert.equal(r.project, 'web');
    assert.equal(r.totals.cost_unknown, true);
    assert.equal(r.totals.cost_usd, 0.0123);
    assert.equal(r.by_model.find((b: { key: string }) => b.key === 'gpt-nobody-priced').cost_usd, null);

    const bad = await runOverseer(home, ['usage', '--by', 'colour']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--by "colour" is not valid: use model, provider, label, workflow, template, project, day, kind/);
    const badSince = await runOverseer(home, ['usage', '--since', 'soon']);
    assert.equal(badSince.code, 2);
    assert.match(badSince.stderr, /since "soon" is not a time/);

    const projects = await runOverseer(home, ['projects', '--json']);
    const p = JSON.parse(projects.stdout).projects[0];
    assert.equal(p.name, 'web');
    assert.equal(p.cost_usd, null, 'part of its spending is unpriced');
    assert.equal(p.cost_lower_bound_usd, 0.0123);
    const table = await runOverseer(home, ['projects']);
    assert.match(table.stdout, /^web\s+active\s+2\s+2 succeeded\s+≥ \$0\.0123/m);
    const change = await runOverseer(home, ['project', 'web', '--archive']);
    assert.equal(change.code, 1);
    assert.match(change.stderr, /No Overseer hub is running: archiving, flagging and notes go through the hub/);
  });
});
