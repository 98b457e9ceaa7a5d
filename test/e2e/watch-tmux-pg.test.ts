// End to end, in a real terminal, on PostgreSQL: the built `overseer watch` runs in tmux against a
// hub whose state is a PostgreSQL database (the watch gets it as a person's shell gives it,
// OVERSEER_DATABASE_URL; the state directory has no state.db). A real claude child on the fake
// model writes a file in a git repository and ends; in the watch, f shows its log with the hub's
// verdict, read from the database, and d its diff with the new file. Waits on the screen, with deadlines.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, cliEnv, MAIN } from '../helpers/cli.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { finishStep } from '../helpers/holder.js';
import { initRepo } from '../helpers/git.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { freshDatabase } from '../helpers/postgres.js';
import { startTerminal, type Terminal } from '../helpers/tmux.js';

const { hubWith, cleanups } = scriptedHubs();
const terminals: Terminal[] = [];
before(buildCli);
after(() => { for (const t of terminals) t.kill(); });

describe('overseer watch on PostgreSQL', () => {
  test('f shows a job\'s log with the verdict and d its diff, both read from the PostgreSQL database', { timeout: 120_000 }, async () => {
    const d = await freshDatabase();
    let repo = '';
    const h = await hubWith({
      writer: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(repo, 'notes-from-pg.txt'), content: 'written on a PostgreSQL crew\n' } }] };
        if (ctx.step === 1) return finishStep('wrote notes-from-pg.txt');
        return { text: 'done' };
      },
    }, { databaseUrl: d.url });
    cleanups.unshift(() => d.drop()); // after the hub stopped (cleanups run last registered first)
    repo = await initRepo(join(h.dir, 'repo'));
    const id = (await h.call('spawn_agent', { prompt: '@script:writer', title: 'Writer', cwd: repo })).job_id as string;
    await waitForJob(h.hub, id, (j) => j.status === 'succeeded', 60_000);
    assert.equal(existsSync(join(h.home, 'state.db')), false, 'the state is in PostgreSQL, not in a file');

    const env = cliEnv({ OVERSEER_HOME: h.home, OVERSEER_DATABASE_URL: d.url, TERM: 'xterm-256color' });
    const t = startTerminal([process.execPath, MAIN, 'watch'], { cwd: h.project, env, width: 100, height: 30 });
    terminals.push(t);
    await t.waitFor('the job selected in DONE', (s) => /DONE \(1\)/.test(s) && s.split('\n').some((l) => l.startsWith('▶') && /Writer/.test(l)));

    t.keys(['f']);
    const log = await t.waitFor('the log screen with the verdict', (s) => new RegExp(`log of "Writer" \\(${id}\\) · ended`).test(s) && new RegExp(`overseer: job ${id} succeeded`).test(s));
    assert.match(log, /── attempt 1 \(initial\) started/, 'the attempt\'s header, from its row in PostgreSQL');
    assert.doesNotMatch(log, /could not be read|no state database/);
    t.keys(['q']);
    await t.waitFor('the list again', (s) => /DONE \(1\)/.test(s));

    t.keys(['d']);
    const diff = await t.waitFor('the diff screen with the new file', (s) => new RegExp(`diff of "Writer" \\(${id}\\): (?!reading)`).test(s) && /notes-from-pg\.txt/.test(s));
    assert.match(diff, /\+written on a PostgreSQL crew/, 'the new file\'s contents');
    t.keys(['Escape']);
    await t.waitFor('the list again', (s) => /DONE \(1\)/.test(s));

    t.keys(['q']);
    const exit = await eventually('watch to exit on q', () => { const e = t.exited(); return e.dead ? e : undefined; }, 10_000);
    assert.deepEqual(exit, { dead: true, status: 0 });
  });
});
