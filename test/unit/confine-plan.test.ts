// The confinement plan of a child (src/confine): what it must not see, what it may not change,
// and the bubblewrap argv that says so. Real directories and a real git repository.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DROPPED_CAPS, bwrapArgs, outermost } from '../../src/confine/plan.js';
import { ConfineError, planFor } from '../../src/confine/jail.js';
import { unwrapExit } from '../../src/confine/launcher.js';

const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'overseer-confine-')));
after(() => rmSync(tmp, { recursive: true, force: true }));

function world(name: string) {
  const base = join(tmp, name);
  const project = join(base, 'project');
  const state = join(base, 'xdg', 'overseer', 'projects', 'p-1234');
  const home = join(base, 'home');
  const pkg = join(base, 'pkg');
  for (const d of [project, state, home, join(pkg, 'dist'), join(pkg, 'hooks')]) mkdirSync(d, { recursive: true });
  execFileSync('git', ['init', '-q', project]);
  return { base, project, state, home, pkg, inputs: { stateDir: state, stateRoot: join(base, 'xdg', 'overseer'), projectDir: project, packageRoot: pkg } };
}

describe('bwrapArgs', () => {
  test('the whole filesystem, then hidden directories as read-only tmpfs, revealed ones bound back, then read-only binds', () => {
    assert.deepEqual(bwrapArgs({ hide: ['/s'], hideFiles: ['/k.db'], reveal: ['/s/codex-home'], readOnly: ['/p/.claude'] }), [
      '--dev-bind', '/', '/',
      '--unshare-pid', '--proc', '/proc', ...DROPPED_CAPS.flatMap((c) => ['--cap-drop', c]),
      '--tmpfs', '/s',
      '--bind', '/s/codex-home', '/s/codex-home',
      '--remount-ro', '/s',
      '--ro-bind', '/dev/null', '/k.db',
      '--ro-bind', '/p/.claude', '/p/.claude',
    ]);
  });

  test('private directories are a writable tmpfs of their own, after the hidden ones are sealed', () => {
    const args = bwrapArgs({ hide: ['/s'], hideFiles: [], reveal: [], readOnly: ['/p/.claude'], private: ['/tmp/cc-socks', '/h/.claude/sessions'] });
    const at = (x: string): number => args.indexOf(x);
    assert.deepEqual(args.slice(at('--remount-ro'), at('--ro-bind')), ['--remount-ro', '/s', '--tmpfs', '/tmp/cc-socks', '--tmpfs', '/h/.claude/sessions']);
    assert.equal(args.filter((a) => a === '--remount-ro').length, 1, 'a private directory stays writable');
  });

  test('outermost keeps only paths no other path of the list contains', () => {
    assert.deepEqual(outermost(['/a/b', '/a', '/ab', '/c/d', '/a/b/c', '/c/d']), ['/a', '/ab', '/c/d']);
  });
});

describe('planFor', () => {
  test('hides the state root and the state, seals the rules: .claude (created), git hooks and config, user settings (created empty), project settings, package code', () => {
    const w = world('basic');
    mkdirSync(join(w.project, '.overseer'));
    writeFileSync(join(w.project, '.mcp.json'), '{}');
    const plan = planFor(w.project, { HOME: w.home }, w.inputs);
    assert.deepEqual(plan.hide, [join(w.base, 'xdg', 'overseer')], 'the state root covers the state dir');
    assert.deepEqual(plan.reveal, []);
    const git = join(w.project, '.git');
    for (const p of [join(w.project, '.claude'), join(w.project, '.mcp.json'), join(w.project, '.overseer'), join(git, 'hooks'), join(git, 'config'),
      join(w.home, '.claude', 'settings.json'), join(w.pkg, 'dist'), join(w.pkg, 'hooks')]) {
      assert.ok(plan.readOnly.includes(p), `${p} is read-only: ${JSON.stringify(plan.readOnly)}`);
    }
    assert.ok(existsSync(join(w.project, '.claude')), '.claude was created so a child cannot create one');
    assert.equal(readFileSync(join(w.home, '.claude', 'settings.json'), 'utf8'), '{}\n');
  });

  test('Claude Code\'s session registry and messaging socket directories are private to the child (created when missing)', () => {
    const w = world('sessions');
    const run = join(w.base, 'run-user');
    mkdirSync(run);
    const plan = planFor(w.project, { HOME: w.home, XDG_RUNTIME_DIR: run }, w.inputs);
    const uid = process.getuid?.() ?? 0;
    for (const d of [join(run, 'cc-socks'), '/tmp/cc-socks', `/tmp/cc-socks-${uid}`, join(w.home, '.claude', 'sessions')]) {
      assert.ok(plan.private?.includes(d), `${d} is private: ${JSON.stringify(plan.private)}`);
      assert.ok(existsSync(d), `${d} exists, so the child does not create the mount point`);
    }
  });

  test('a Codex child gets its CODEX_HOME back inside the hidden state, with its config read-only', () => {
    const w = world('codex');
    const codexHome = join(w.state, 'codex-home');
    mkdirSync(codexHome);
    writeFileSync(join(codexHome, 'config.toml'), '');
    const plan = planFor(w.project, { HOME: w.home, CODEX_HOME: codexHome }, w.inputs);
    assert.deepEqual(plan.reveal, [codexHome]);
    assert.ok(plan.readOnly.includes(join(codexHome, 'config.toml')));
  });

  test('a work tree inside the state cannot be confined: ConfineError', () => {
    const w = world('inside');
    const tree = join(w.state, 'tree');
    mkdirSync(tree);
    assert.throws(() => planFor(tree, { HOME: w.home }, w.inputs), ConfineError);
  });

  test('paths are real: a state reached through a symlink is hidden at its real place', () => {
    const w = world('symlink');
    const link = join(w.base, 'state-link');
    symlinkSync(w.state, link);
    const plan = planFor(w.project, { HOME: w.home }, { ...w.inputs, stateDir: link, stateRoot: undefined });
    assert.deepEqual(plan.hide, [w.state]);
  });

  test('the rules of a subdirectory work tree: .claude at the tree and at the git top level', () => {
    const w = world('subdir');
    const sub = join(w.project, 'pkg', 'a');
    mkdirSync(sub, { recursive: true });
    const plan = planFor(sub, { HOME: w.home }, w.inputs);
    assert.ok(plan.readOnly.includes(join(sub, '.claude')));
    assert.ok(plan.readOnly.includes(join(w.project, '.claude')));
  });
});

describe('planFor: the database\'s credential files', () => {
  test('the hub\'s ~/.pgpass, PGPASSFILE, PGSSLKEY/PGSSLCERT, the URL\'s sslkey=/sslcert= and the child\'s ~/.pgpass are hidden when they are files', () => {
    const w = world('dbfiles');
    const hubHome = join(w.base, 'hub-home');
    const tls = join(w.base, 'tls');
    mkdirSync(hubHome);
    mkdirSync(tls);
    const files = {
      hubPgpass: join(hubHome, '.pgpass'), childPgpass: join(w.home, '.pgpass'), passfile: join(tls, 'crew.pgpass'),
      envKey: join(tls, 'env.key'), envCert: join(tls, 'env.crt'), urlKey: join(tls, 'url.key'), urlCert: join(tls, 'url.crt'),
    };
    for (const f of Object.values(files)) writeFileSync(f, 'secret\n');
    const hubEnv = { HOME: hubHome, PGPASSFILE: files.passfile, PGSSLKEY: files.envKey, PGSSLCERT: files.envCert, PGSSLROOTCERT: join(tls, 'missing-ca.pem') };
    const databaseUrl = `postgres://crew@db.example:5432/crew?sslmode=verify-full&sslkey=${encodeURIComponent(files.urlKey)}&sslcert=${files.urlCert}`;
    const plan = planFor(w.project, { HOME: w.home }, { ...w.inputs, hubEnv, databaseUrl });
    assert.deepEqual([...plan.hideFiles].sort(), Object.values(files).sort());
    assert.ok(bwrapArgs(plan).join(' ').includes(`--ro-bind /dev/null ${files.urlKey}`));
  });

  test('missing files and directories are not hidden (nothing to bind over); a state file inside the hidden state is not listed twice', () => {
    const w = world('dbnone');
    const inState = join(w.state, 'pgpass');
    writeFileSync(inState, 'secret\n');
    const plan = planFor(w.project, { HOME: w.home }, { ...w.inputs, hubEnv: { HOME: join(w.base, 'nobody'), PGPASSFILE: inState, PGSSLKEY: w.home }, databaseUrl: 'postgres://u@h/d?sslkey=/nonexistent/key' });
    assert.deepEqual(plan.hideFiles, []);
  });
});

describe('unwrapExit', () => {
  test('128+N from bubblewrap is the agent killed by signal N; other exits pass through', () => {
    assert.deepEqual(unwrapExit({ code: 137, signal: null }), { code: null, signal: 'SIGKILL' });
    assert.deepEqual(unwrapExit({ code: 143, signal: null }), { code: null, signal: 'SIGTERM' });
    assert.deepEqual(unwrapExit({ code: 1, signal: null }), { code: 1, signal: null });
    assert.deepEqual(unwrapExit({ code: 128, signal: null }), { code: 128, signal: null });
    assert.deepEqual(unwrapExit({ code: null, signal: 'SIGTERM' }), { code: null, signal: 'SIGTERM' });
  });
});
