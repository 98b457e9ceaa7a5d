// `overseer kb list|search|add|rm` against temp state and XDG directories: plain tables,
// --json, the triage on add (rejections are errors), and clear errors for bad options; with a
// PostgreSQL database configured, the same commands on its kb_entries under the project's root.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runKb, type KbCliOptions, type KbSub } from '../../src/cli/kb.js';
import { InvalidInputError } from '../../src/errors.js';
import { KnowledgeBase } from '../../src/kb/service.js';
import { projectRoot } from '../../src/config.js';
import { openSql } from '../../src/store/sql/open.js';
import { freshDatabase } from '../helpers/postgres.js';

let dir: string;
let env: NodeJS.ProcessEnv;

async function kb(sub: KbSub, args: string[] = [], opts: KbCliOptions = {}): Promise<string> {
  let out = '';
  await runKb(sub, args, opts, { out: (t) => { out += t; }, env, cwd: dir });
  return out;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-cli-'));
  env = { OVERSEER_HOME: join(dir, 'state'), XDG_DATA_HOME: join(dir, 'xdg'), HOME: join(dir, 'home') };
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('overseer kb', () => {
  test('list on an empty KB says so', async () => {
    assert.equal(await kb('list'), 'The knowledge base is empty.\n');
  });

  test('add stores (project by default, global with --scope) into the configured files', async () => {
    const out = await kb('add', [], { title: 'Tests need TZ=UTC', content: 'The date formatting test fails unless TZ=UTC is set in the environment.', tags: 'ci, tests' });
    assert.equal(out, 'stored p-1 (project): Tests need TZ=UTC\n');
    const g = await kb('add', [], { title: 'git worktree prune', content: 'Stale worktrees block branch deletion; run git worktree prune first.', scope: 'global' });
    assert.equal(g, 'stored g-1 (global): git worktree prune\n');
    assert.ok(existsSync(join(dir, 'state', 'kb.db')));
    assert.ok(existsSync(join(dir, 'xdg', 'overseer', 'kb.db')));
  });

  test('add of a duplicate merges; a secret or a short content is an error with the reason', async () => {
    const m = await kb('add', [], { title: 'tests need tz=utc', content: 'Also LANG=C for the sort test.' });
    assert.match(m, /^merged into p-1 \(same title as p-1, new information appended\)/);
    await assert.rejects(kb('add', [], { title: 'Token for the mirror', content: `push with ${'ghp_'}${'Zx9Yw8Vu7T'.repeat(4)} to the mirror` }),
      (err: unknown) => err instanceof InvalidInputError && /rejected: looks like it contains a secret: a GitHub token/.test(err.message) && !err.message.includes('Zx9Yw8Vu7T'));
    await assert.rejects(kb('add', [], { title: 'Short one', content: 'nope' }), /rejected: content is too short/);
    await assert.rejects(kb('add', [], { title: 'No content' }), /needs --title .* and --content/);
    await assert.rejects(kb('add', [], { title: 'Bad scope', content: 'long enough content for the check', scope: 'all' }), /--scope "all": use project or global/);
  });

  test('list prints a table of both scopes; --scope and --json', async () => {
    const out = await kb('list');
    const lines = out.trimEnd().split('\n');
    assert.match(lines[0]!, /^ID\s+SCOPE\s+MERGED\s+UPDATED\s+SOURCE\s+TAGS\s+TITLE$/);
    assert.match(lines[1]!, /^p-1\s+project\s+1\s+\d{4}-\d\d-\d\d\s+-\s+ci,tests\s+Tests need TZ=UTC$/);
    assert.match(lines[2]!, /^g-1\s+global\s+0\s/);
    assert.equal(lines.length, 3);
    const g = JSON.parse(await kb('list', [], { scope: 'global', json: true }));
    assert.deepEqual(g.entries.map((e: { entry_id: string }) => e.entry_id), ['g-1']);
    await assert.rejects(kb('list', [], { scope: 'team' }), /--scope "team": use project, global or all/);
    await assert.rejects(kb('list', [], { limit: 'ten' }), /--limit "ten"/);
  });

  test('search prints ranked hits; no hit says so; --json gives the tool shape', async () => {
    const out = await kb('search', ['date', 'formatting']);
    assert.match(out, /^ID\s+SCORE\s+TITLE\s+SNIPPET\n/);
    assert.match(out, /\np-1\s+\d+\.\d\d\s+Tests need TZ=UTC\s+.*\*\*date\*\*/);
    assert.equal(await kb('search', ['xylophone']), 'No entries match "xylophone".\n');
    const j = JSON.parse(await kb('search', ['worktree'], { json: true }));
    assert.equal(j[0].entry_id, 'g-1');
    await assert.rejects(kb('search', ['?!']), /query has no letters or digits/);
  });

  test('rm deletes; an unknown id names nearby ones', async () => {
    assert.equal(await kb('rm', ['g-1']), 'deleted g-1: git worktree prune\n');
    await assert.rejects(kb('rm', ['p-7']), /no project knowledge base entry p-7\. Nearby: p-1/);
    await assert.rejects(kb('rm', []), /needs an entry id/);
    assert.doesNotMatch(await kb('list'), /g-1/);
  });
});

describe('overseer kb with a PostgreSQL database configured', () => {
  let pgDir: string;
  let pgEnv: NodeJS.ProcessEnv;
  let drop = async (): Promise<void> => undefined;
  before(async () => {
    const fresh = await freshDatabase();
    drop = fresh.drop;
    pgDir = mkdtempSync(join(tmpdir(), 'kb-cli-pg-'));
    pgEnv = { OVERSEER_HOME: join(pgDir, 'state'), XDG_DATA_HOME: join(pgDir, 'xdg'), HOME: join(pgDir, 'home'), OVERSEER_DATABASE_URL: fresh.url };
    // The schema, as a hub creates it when it starts: `overseer kb` never migrates.
    await (await openSql({ home: join(pgDir, 'state'), databaseUrl: fresh.url })).close();
  });
  after(async () => {
    await drop();
    rmSync(pgDir, { recursive: true, force: true });
  });
  const pgKb = async (sub: KbSub, args: string[] = [], opts: KbCliOptions = {}): Promise<string> => {
    let out = '';
    await runKb(sub, args, opts, { out: (t) => { out += t; }, env: pgEnv, cwd: pgDir });
    return out;
  };

  test('entries go to the database\'s kb_entries under the project\'s root, not to files; the hub\'s service sees them', async () => {
    assert.equal(await pgKb('add', [], { title: 'Tests need TZ=UTC', content: 'The date formatting test fails unless TZ=UTC is set in the environment.' }), 'stored p-1 (project): Tests need TZ=UTC\n');
    assert.match(await pgKb('add', [], { title: 'tests need tz=utc', content: 'Also LANG=C for the sort test.' }), /^merged into p-1/);
    assert.equal(existsSync(join(pgDir, 'state', 'kb.db')), false, 'no project file');
    assert.equal(existsSync(join(pgDir, 'xdg', 'overseer', 'kb.db')), false, 'no global file');
    assert.match(await pgKb('search', ['formatting']), /\np-1\s+\d+\.\d+\s+Tests need TZ=UTC/);
    // The service a hub of this project builds (compose.ts: the project's root as its key) finds it.
    const s = await openSql({ home: join(pgDir, 'state'), databaseUrl: pgEnv.OVERSEER_DATABASE_URL });
    const hubKb = new KnowledgeBase({ source: { dialect: 'postgres', db: s.db, projectKey: projectRoot(pgDir) }, projectDir: pgDir });
    const other = new KnowledgeBase({ source: { dialect: 'postgres', db: s.db, projectKey: '/another/project' } });
    try {
      assert.deepEqual((await hubKb.list()).entries.map((e) => [e.entry_id, e.merged_count]), [['p-1', 1]]);
      assert.deepEqual((await other.list()).entries, [], 'another project does not see it');
    } finally {
      await hubKb.close();
      await other.close();
      await s.close();
    }
    assert.equal(await pgKb('rm', ['p-1']), 'deleted p-1: Tests need TZ=UTC\n');
    assert.equal(await pgKb('list'), 'The knowledge base is empty.\n');
  });
});
