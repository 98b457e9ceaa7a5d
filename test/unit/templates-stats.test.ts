// Template stats over the jobs table (a real SQLite file from openDb, rows inserted by SQL) and
// the `overseer templates` report built from a state directory.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db } from '../../src/store/db.js';
import { templateStats } from '../../src/templates/stats.js';
import { sqlOver } from '../../src/store/sql/open.js';
import { formatTemplates, runTemplates, templatesReport, type TemplatesReport } from '../../src/cli/templates.js';

let home: string;
let seq = 0;

function insert(db: Db, j: { template: string | null; model: string | null; status: string; cost?: number; turns?: number; started?: number | null; ended?: number | null }): void {
  seq++;
  db.prepare(
    `INSERT INTO jobs (id, seq, depth, title, prompt, provider, model, cwd, template, status, cost_usd, turns, created_at, started_at, ended_at, updated_at)
     VALUES (?, ?, 1, ?, 'p', 'claude', ?, '/tmp', ?, ?, ?, ?, 0, ?, ?, 0)`,
  ).run(`j-${seq}`, seq, `job ${seq}`, j.model, j.template, j.status, j.cost ?? 0, j.turns ?? 0, j.started ?? null, j.ended ?? null);
}

before(() => {
  home = mkdtempSync(join(tmpdir(), 'ovs-tstats-'));
  const db = openDb(join(home, 'state.db'));
  // bugfix on opus: a success (60 s), a failure (30 s), one still running and one interrupted (not ended).
  insert(db, { template: 'bugfix', model: 'opus', status: 'succeeded', cost: 1, turns: 10, started: 0, ended: 60_000 });
  insert(db, { template: 'bugfix', model: 'opus', status: 'failed', cost: 0.5, turns: 4, started: 1_000, ended: 31_000 });
  insert(db, { template: 'bugfix', model: 'opus', status: 'running', cost: 9, turns: 99, started: 0 });
  insert(db, { template: 'bugfix', model: 'opus', status: 'interrupted', cost: 3, turns: 30, started: 0, ended: 5_000 });
  // bugfix on the default model: a success (10 s) and one cancelled while queued (ended, never started).
  insert(db, { template: 'bugfix', model: null, status: 'succeeded', cost: 0.25, turns: 2, started: 0, ended: 10_000 });
  insert(db, { template: 'bugfix', model: null, status: 'cancelled', started: null, ended: 5_000 });
  // docs: queued only. old: a template whose file is gone. No template: not counted.
  insert(db, { template: 'docs', model: 'haiku', status: 'queued' });
  insert(db, { template: 'old', model: null, status: 'succeeded', cost: 0.1, turns: 1, started: 0, ended: 2_000 });
  insert(db, { template: null, model: 'opus', status: 'succeeded', cost: 100, turns: 100, started: 0, ended: 1_000_000 });
  db.close();

  const dir = join(home, 'templates');
  mkdirSync(dir);
  writeFileSync(join(dir, 'bugfix.md'), '---\ndescription: Fix a bug with a regression test\nmodel: opus\n---\nTest first.\n');
  writeFileSync(join(dir, 'docs.md'), '---\nmodel: haiku\nworktree: true\n---\n');
  writeFileSync(join(dir, 'refactor.md'), '---\ndescription: Never used yet\n---\n');
  writeFileSync(join(dir, 'broken.md'), '---\nmax_turns: lots\n---\n');
});
after(() => { rmSync(home, { recursive: true, force: true }); });

describe('templateStats', () => {
  test('per template: runs, success rate over ended jobs, averages over ended jobs', async () => {
    const db = openDb(join(home, 'state.db'));
    try {
      const stats = (await templateStats(sqlOver(db).db));
      assert.deepEqual(stats.map((s) => s.template), ['bugfix', 'docs', 'old']);
      const b = stats[0]!;
      assert.equal(b.runs, 6);
      assert.equal(b.ended, 4, 'succeeded, failed, succeeded, cancelled');
      assert.equal(b.succeeded, 2);
      assert.equal(b.success_rate, 0.5);
      assert.equal(b.avg_cost_usd, 0.4375, '(1 + 0.5 + 0.25 + 0) / 4');
      assert.equal(b.avg_turns, 4, '(10 + 4 + 2 + 0) / 4');
      assert.equal(b.avg_duration_s, 33.3, '(60 + 30 + 10) / 3 started-and-ended jobs');
    } finally {
      db.close();
    }
  });

  test('per model within a template, the default model (null) last', async () => {
    const db = openDb(join(home, 'state.db'));
    try {
      const b = (await templateStats(sqlOver(db).db))[0]!;
      assert.deepEqual(b.by_model, [
        { model: 'opus', runs: 4, ended: 2, succeeded: 1, success_rate: 0.5, avg_cost_usd: 0.75, avg_turns: 7, avg_duration_s: 45 },
        { model: null, runs: 2, ended: 2, succeeded: 1, success_rate: 0.5, avg_cost_usd: 0.125, avg_turns: 1, avg_duration_s: 10 },
      ]);
    } finally {
      db.close();
    }
  });

  test('a template with nothing ended has null rates and averages, not zeros', async () => {
    const db = openDb(join(home, 'state.db'));
    try {
      const d = (await templateStats(sqlOver(db).db)).find((s) => s.template === 'docs')!;
      assert.deepEqual({ ...d, by_model: undefined }, {
        template: 'docs', runs: 1, ended: 0, succeeded: 0, success_rate: null, avg_cost_usd: null, avg_turns: null, avg_duration_s: null, by_model: undefined,
      });
    } finally {
      db.close();
    }
  });

  test('an empty database has no stats', async () => {
    const db = openDb(':memory:');
    try {
      assert.deepEqual(await templateStats(sqlOver(db).db), []);
    } finally {
      db.close();
    }
  });
});

describe('overseer templates', () => {
  test('--json: templates with their stats, invalid files, and stats of templates without a file', async () => {
    let out = '';
    let code: number | undefined;
    await runTemplates({ json: true }, { home, write: (s) => { out += s; }, exitCode: (c) => { code = c; } });
    assert.equal(code, 1, 'an invalid template file makes the command fail');
    const r = JSON.parse(out) as TemplatesReport;
    assert.equal(r.dir, join(home, 'templates'));
    assert.deepEqual(r.templates.map((t) => [t.name, t.description, t.defaults.model, t.stats?.runs ?? 0]), [
      ['bugfix', 'Fix a bug with a regression test', 'opus', 6],
      ['docs', '', 'haiku', 1],
      ['refactor', 'Never used yet', undefined, 0],
    ]);
    assert.equal(r.templates[0]!.stats!.success_rate, 0.5);
    assert.deepEqual(r.invalid.map((p) => p.name), ['broken']);
    assert.match(r.invalid[0]!.message, /max_turns = "lots": must be a whole number/);
    assert.deepEqual(r.without_file.map((s) => s.template), ['old']);
  });

  test('table: a row per template with its stats, model rows when it ran on several models', async () => {
    let out = '';
    let code: number | undefined;
    await runTemplates({}, { home, write: (s) => { out += s; }, exitCode: (c) => { code = c; } });
    assert.equal(code, 1);
    const lines = out.split('\n');
    assert.match(lines[0]!, /^TEMPLATE\s+MODEL\s+RUNS\s+SUCCESS\s+AVG COST\s+AVG TURNS\s+AVG TIME\s+DESCRIPTION$/);
    assert.match(out, /^bugfix\s+opus\s+6\s+50%\s+\$0\.4375\s+4\s+33s\s+Fix a bug with a regression test$/m);
    assert.match(out, /^\s+opus\s+4\s+50%\s+\$0\.7500\s+7\s+45s\s*$/m);
    assert.match(out, /^\s+\(default\)\s+2\s+50%\s+\$0\.1250\s+1\s+10s\s*$/m);
    assert.match(out, /^docs\s+haiku\s+1\s+-\s+-\s+-\s+-\s+model haiku; worktree$/m, 'no description: the defaults are shown');
    assert.match(out, /^refactor\s+\(default\)\s+0\s+-/m);
    assert.match(out, /template old has no file any more: 1 run\(s\), success 100%/);
    assert.match(out, /invalid: Invalid template .*broken\.md/);
  });

  test('a state directory without templates or database says how to create one', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'ovs-tstats-empty-'));
    try {
      const r = await templatesReport(empty);
      assert.deepEqual(r, { dir: join(empty, 'templates'), templates: [], invalid: [], without_file: [] });
      const text = formatTemplates(r);
      assert.ok(text.startsWith(`No templates in ${join(empty, 'templates')}.`));
      assert.match(text, /front matter with spawn defaults/);
      let code: number | undefined;
      await runTemplates({}, { home: empty, write: () => undefined, exitCode: (c) => { code = c; } });
      assert.equal(code, 0, 'no invalid file: success');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
