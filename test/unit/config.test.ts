// Configuration: defaults, env string coercion, error messages that name key + env var + value,
// strict keys, loadConfig from .overseer/config.json (the settings directory) with env on top, state dir resolution.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { loadConfigFrom, loadConfig, resolveStateDir, resolveSettingsDir, projectStateDir, stateRoot, gitRoot, packageRoot } from '../../src/config.js';
import { createHash } from 'node:crypto';
import { InvalidInputError } from '../../src/errors.js';

/** Asserts `fn` throws an InvalidInputError and returns its message. */
function invalid(fn: () => unknown): string {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof InvalidInputError, `expected InvalidInputError, got ${String(caught)}`);
  assert.equal(caught.code, 'invalid_input');
  return caught.message;
}

let tmp = '';
before(() => {
  // realpath: git reports the resolved top level, so compare against the resolved path.
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'overseer-config-')));
});
after(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function freshDir(name: string): string {
  const d = join(tmp, name);
  mkdirSync(d, { recursive: true });
  return d;
}

function gitInit(dir: string): void {
  execFileSync('git', ['init', '-q', dir], { stdio: 'ignore' });
}

describe('loadConfigFrom', () => {
  test('a hub timeout not longer than the beat is refused, saying which keys and what to do', () => {
    assert.throws(() => loadConfigFrom({ home: '/state', hubBeatMs: 5000, hubTimeoutMs: 5000 }), /hubTimeoutMs \(env OVERSEER_HUB_TIMEOUT_MS\) = 5000 is not longer than hubBeatMs \(env OVERSEER_HUB_BEAT_MS\) = 5000: .*raise the timeout or lower the beat/);
    assert.equal(loadConfigFrom({ home: '/state', hubBeatMs: '200', hubTimeoutMs: '2000' }).hubTimeoutMs, 2000);
  });

  test('fills every default', () => {
    const c = loadConfigFrom({ home: '/state' });
    assert.deepEqual(c, {
      home: '/state',
      maxAgents: 8,
      port: 0,
      lockMode: 'auto',
      logLevel: 'info',
      maxDepth: 2,
      defaultTimeoutS: 3600,
      killGraceMs: 3000,
      maxAttempts: 3,
      maxWaitS: 3600,
      noteMaxBytes: 1048576,
      idleExitS: 300,
      confine: 'auto',
      maxSessionsPerToken: 32,
      sessionIdleS: 1800,
      health: { stalledS: 600, longRunningS: 0, highFraction: 0.8, checkMs: 1000, reactions: {}, nudge: 'Overseer: {warning}: {detail}. If you are stuck, say so with report_status or finish with what you have.' },
      notify: { sinks: [], rate: { perMinute: 6, repeatS: 300 } },
      worktree: { copy: [], setup: [], setupTimeoutS: 600, detect: true },
      fallbackModels: [],
      kbTriage: false,
      codexSandbox: 'workspace-write',
      codexPrices: {},
      labelBudgets: {},
      modelTiers: {},
      classifierModel: 'claude-haiku-4-5',
      classifierTimeoutS: 30,
      startConcurrency: 'auto',
      startHoldMs: 1500,
      limits: { backoffBaseMs: 1000, backoffCapMs: 300_000, probeLeaseMs: 120_000 },
      capabilities: { debates: true, schedules: true, search: true, takeover: true },
      hubBeatMs: 5000,
      hubTimeoutMs: 30000,
      mergeOnFailure: 'stop',
      sendBackRounds: 2,
    });
    assert.equal(c.claudeBin, undefined);
    assert.equal(c.budgetUsd, undefined, 'no house budget unless one is set');
  });

  test('coerces numeric strings from the environment', () => {
    const c = loadConfigFrom({ home: '/s', maxAgents: '4', port: '8080', maxDepth: '3', killGraceMs: '0', maxWaitS: '60' });
    assert.equal(c.maxAgents, 4);
    assert.equal(c.port, 8080);
    assert.equal(c.maxDepth, 3);
    assert.equal(c.killGraceMs, 0);
    assert.equal(c.maxWaitS, 60);
    assert.equal(typeof c.maxAgents, 'number');
  });

  test('limits: JSON from the env, defaults filled in; an unknown key or a cap under the base is refused saying what is wrong', () => {
    assert.deepEqual(loadConfigFrom({ home: '/s', limits: '{"backoffBaseMs":100}' }).limits, { backoffBaseMs: 100, backoffCapMs: 300_000, probeLeaseMs: 120_000 });
    assert.throws(() => loadConfigFrom({ home: '/s', limits: { backof: 1 } }), /limits takes only backoffBaseMs, backoffCapMs, probeLeaseMs/);
    assert.throws(() => loadConfigFrom({ home: '/s', limits: { backoffBaseMs: 5000, backoffCapMs: 1000 } }), /backoffCapMs must be at least backoffBaseMs/);
  });

  test('startConcurrency: "auto", a number (also from an env string), 0 = no gate; nonsense refused', () => {
    assert.equal(loadConfigFrom({ home: '/s', startConcurrency: 'auto' }).startConcurrency, 'auto');
    assert.equal(loadConfigFrom({ home: '/s', startConcurrency: '3' }).startConcurrency, 3);
    assert.equal(loadConfigFrom({ home: '/s', startConcurrency: '0' }).startConcurrency, 0);
    assert.equal(loadConfigFrom({ home: '/s', startConcurrency: 2 }).startConcurrency, 2);
    assert.throws(() => loadConfigFrom({ home: '/s', startConcurrency: 'fast' }));
    assert.throws(() => loadConfigFrom({ home: '/s', startConcurrency: '-1' }));
  });

  test('accepts numbers as numbers (config.json) and the enum values', () => {
    const c = loadConfigFrom({ home: '/s', maxAgents: 16, lockMode: 'strict', logLevel: 'debug', claudeBin: '/usr/bin/claude' });
    assert.equal(c.maxAgents, 16);
    assert.equal(c.lockMode, 'strict');
    assert.equal(c.logLevel, 'debug');
    assert.equal(c.claudeBin, '/usr/bin/claude');
  });

  test('OVERSEER_MAX_AGENTS="0" → error naming key, env var and value', () => {
    const msg = invalid(() => loadConfigFrom({ home: '/s', maxAgents: '0' }));
    assert.match(msg, /maxAgents/);
    assert.match(msg, /OVERSEER_MAX_AGENTS/);
    assert.match(msg, /"0"/);
    assert.match(msg, /greater than or equal to 1/);
  });

  test('OVERSEER_MAX_AGENTS="abc" → "must be a number"', () => {
    const msg = invalid(() => loadConfigFrom({ home: '/s', maxAgents: 'abc' }));
    assert.match(msg, /maxAgents \(env OVERSEER_MAX_AGENTS\) = "abc"/);
    assert.match(msg, /must be a number/);
  });

  test('a fractional value → "must be a whole number"', () => {
    const msg = invalid(() => loadConfigFrom({ home: '/s', maxAttempts: '2.5' }));
    assert.match(msg, /maxAttempts/);
    assert.match(msg, /OVERSEER_MAX_ATTEMPTS/);
    assert.match(msg, /whole number/);
  });

  test('above the maximum is rejected', () => {
    const msg = invalid(() => loadConfigFrom({ home: '/s', port: '70000' }));
    assert.match(msg, /port \(env OVERSEER_PORT\) = "70000"/);
  });

  test('a bad enum value names the key, the env var and the choices', () => {
    const msg = invalid(() => loadConfigFrom({ home: '/s', lockMode: 'sometimes' }));
    assert.match(msg, /lockMode/);
    assert.match(msg, /OVERSEER_LOCK_MODE/);
    assert.match(msg, /"sometimes"/);
    assert.match(msg, /auto/);
  });

  test('every bad key is reported, not only the first', () => {
    const msg = invalid(() => loadConfigFrom({ home: '/s', maxAgents: 'x', logLevel: 'loud' }));
    assert.match(msg, /OVERSEER_MAX_AGENTS/);
    assert.match(msg, /OVERSEER_LOG_LEVEL/);
  });

  test('missing home → error says (missing)', () => {
    const msg = invalid(() => loadConfigFrom({}));
    assert.match(msg, /home/);
    assert.match(msg, /\(missing\)/);
  });

  test('an unknown key is rejected and named', () => {
    const msg = invalid(() => loadConfigFrom({ home: '/s', maxAgentz: 4 }));
    assert.match(msg, /maxAgentz/);
  });

  test('the source label appears in the message', () => {
    const msg = invalid(() => loadConfigFrom({ home: '/s', maxAgents: '0' }, 'configuration (x.json)'));
    assert.match(msg, /^Invalid configuration \(x\.json\)/);
  });
});

describe('budgets (docs/budgets.md)', () => {
  test('OVERSEER_BUDGET_USD and OVERSEER_LABEL_BUDGETS from the environment (strings, JSON), or numbers and an object from config.json; 0 is a budget', () => {
    const env = loadConfigFrom({ home: '/s', budgetUsd: '12.5', labelBudgets: '{"tests": 5, "docs": 0}' });
    assert.equal(env.budgetUsd, 12.5);
    assert.deepEqual(env.labelBudgets, { tests: 5, docs: 0 });
    const file = loadConfigFrom({ home: '/s', budgetUsd: 0, labelBudgets: { tests: 1.25 } });
    assert.equal(file.budgetUsd, 0);
    assert.deepEqual(file.labelBudgets, { tests: 1.25 });
  });

  test('a budget below zero, not a number, or empty is refused naming the key, the env var and the value', () => {
    const neg = invalid(() => loadConfigFrom({ home: '/s', budgetUsd: '-1' }));
    assert.match(neg, /budgetUsd \(env OVERSEER_BUDGET_USD\) = "-1": must be 0 or more/);
    assert.match(invalid(() => loadConfigFrom({ home: '/s', budgetUsd: 'ten' })), /budgetUsd \(env OVERSEER_BUDGET_USD\) = "ten": must be a number of US dollars, e\.g\. 25/);
    assert.match(invalid(() => loadConfigFrom({ home: '/s', budgetUsd: '' })), /budgetUsd \(env OVERSEER_BUDGET_USD\) = "": must be a number/, 'an empty value in config.json is not $0');
    assert.match(invalid(() => loadConfigFrom({ home: '/s', budgetUsd: -0.01 })), /budgetUsd \(env OVERSEER_BUDGET_USD\) = -0\.01: must be 0 or more/);
  });

  test('a label budget below zero, not a number, or a value that is not an object is refused naming the label', () => {
    assert.match(invalid(() => loadConfigFrom({ home: '/s', labelBudgets: '{"tests": -2}' })), /labelBudgets\.tests \(env OVERSEER_LABEL_BUDGETS\) = -2: must be 0 or more/);
    assert.match(invalid(() => loadConfigFrom({ home: '/s', labelBudgets: { docs: '3' } })), /labelBudgets\.docs \(env OVERSEER_LABEL_BUDGETS\) = "3": must be a number of US dollars/);
    assert.match(invalid(() => loadConfigFrom({ home: '/s', labelBudgets: 'tests=5' })), /labelBudgets \(env OVERSEER_LABEL_BUDGETS\) = "tests=5": must be a JSON object of label → US dollars/);
  });

  test('loadConfig reads them from the environment: a bad one stops the hub before anything starts', () => {
    const dir = freshDir('lc-budget');
    const msg = invalid(() => loadConfig({ OVERSEER_HOME: dir, OVERSEER_BUDGET_USD: '-5' }, dir));
    assert.match(msg, /^Invalid configuration \(environment\):\n {2}budgetUsd \(env OVERSEER_BUDGET_USD\) = "-5": must be 0 or more/);
    assert.equal(loadConfig({ OVERSEER_HOME: dir, OVERSEER_BUDGET_USD: '3', OVERSEER_LABEL_BUDGETS: '{"a":1}' }, dir).budgetUsd, 3);
  });
});

describe('resolveStateDir', () => {
  test('absolute OVERSEER_HOME is used as is', () => {
    assert.equal(resolveStateDir({ OVERSEER_HOME: '/var/overseer' }, '/somewhere/else'), '/var/overseer');
  });

  test('relative OVERSEER_HOME resolves against cwd', () => {
    assert.equal(resolveStateDir({ OVERSEER_HOME: 'state/dir' }, '/a/b'), '/a/b/state/dir');
    assert.equal(resolveStateDir({ OVERSEER_HOME: '../up' }, '/a/b'), '/a/up');
  });

  test('inside a git repository → the project\'s directory under $XDG_STATE_HOME/overseer, from the git root even in a subdirectory; settings stay in <root>/.overseer', () => {
    const repo = realpathSync(freshDir('repo'));
    gitInit(repo);
    const sub = join(repo, 'pkg', 'deep');
    mkdirSync(sub, { recursive: true });
    assert.equal(gitRoot(sub), repo);
    const env = { XDG_STATE_HOME: join(tmp, 'xdg-state') };
    const expected = join(tmp, 'xdg-state', 'overseer', 'projects', `${basename(repo)}-${createHash('sha256').update(repo).digest('hex').slice(0, 8)}`);
    assert.equal(resolveStateDir(env, sub), expected);
    assert.equal(resolveStateDir(env, repo), expected);
    assert.equal(projectStateDir(repo, env), expected);
    assert.equal(resolveSettingsDir(env, sub), join(repo, '.overseer'));
    assert.ok(!expected.startsWith(`${repo}/`), 'the state is outside the repository');
  });

  test('without XDG_STATE_HOME the state root is ~/.local/state/overseer; a relative XDG_STATE_HOME is ignored', () => {
    assert.equal(stateRoot({ HOME: '/home/u' }), '/home/u/.local/state/overseer');
    assert.equal(stateRoot({ HOME: '/home/u', XDG_STATE_HOME: 'rel' }), '/home/u/.local/state/overseer');
    assert.equal(stateRoot({ HOME: '/home/u', XDG_STATE_HOME: '/x' }), '/x/overseer');
  });

  test('two clones with the same name get different state directories', () => {
    const a = realpathSync(freshDir('twin-a'));
    const b = realpathSync(freshDir('twin-b'));
    mkdirSync(join(a, 'app'));
    mkdirSync(join(b, 'app'));
    assert.notEqual(projectStateDir(join(a, 'app'), {}), projectStateDir(join(b, 'app'), {}));
  });

  test('a state left in <root>/.overseer by an older version is used until it moves; OVERSEER_SETTINGS_DIR names the settings', () => {
    const repo = realpathSync(freshDir('repo-legacy'));
    gitInit(repo);
    const env = { XDG_STATE_HOME: join(tmp, 'xdg-legacy') };
    mkdirSync(join(repo, '.overseer'));
    writeFileSync(join(repo, '.overseer', 'state.db'), '');
    assert.equal(resolveStateDir(env, repo), join(repo, '.overseer'));
    assert.equal(resolveSettingsDir({ ...env, OVERSEER_SETTINGS_DIR: '/s' }, repo), '/s');
    assert.equal(resolveSettingsDir({ ...env, OVERSEER_HOME: '/h' }, repo), '/h');
  });

  test('an empty OVERSEER_HOME falls back to the project rule', () => {
    const repo = realpathSync(freshDir('repo-empty-home'));
    gitInit(repo);
    const env = { OVERSEER_HOME: '', XDG_STATE_HOME: join(tmp, 'xdg-empty') };
    assert.equal(resolveStateDir(env, repo), projectStateDir(repo, env));
  });

  test('gitRoot of a directory that does not exist → undefined', () => {
    assert.equal(gitRoot(join(tmp, 'no', 'such', 'dir')), undefined);
  });
});

describe('loadConfig', () => {
  test('no file, empty env → defaults with home under the state root and settings at <git root>/.overseer', () => {
    const repo = realpathSync(freshDir('lc-defaults'));
    gitInit(repo);
    const env = { XDG_STATE_HOME: join(tmp, 'xdg-lc') };
    const c = loadConfig(env, repo);
    assert.equal(c.home, projectStateDir(repo, env));
    assert.equal(c.settingsDir, join(repo, '.overseer'));
    assert.equal(c.maxAgents, 8);
    assert.equal(existsSync(c.home), false, 'loading config does not create the state dir');
  });

  test('reads .overseer/config.json; env overrides the file key by key', () => {
    const repo = freshDir('lc-file');
    gitInit(repo);
    mkdirSync(join(repo, '.overseer'));
    writeFileSync(join(repo, '.overseer', 'config.json'), JSON.stringify({ maxAgents: 2, logLevel: 'debug', maxDepth: 4 }));
    const fileOnly = loadConfig({}, repo);
    assert.equal(fileOnly.maxAgents, 2);
    assert.equal(fileOnly.logLevel, 'debug');
    assert.equal(fileOnly.maxDepth, 4);

    const withEnv = loadConfig({ OVERSEER_MAX_AGENTS: '5', OVERSEER_LOG_LEVEL: 'warn', PATH: '/usr/bin' }, repo);
    assert.equal(withEnv.maxAgents, 5);
    assert.equal(withEnv.logLevel, 'warn');
    assert.equal(withEnv.maxDepth, 4, 'keys not in env still come from the file');
  });

  test('an empty env variable does not override the file', () => {
    const repo = freshDir('lc-empty-env');
    gitInit(repo);
    mkdirSync(join(repo, '.overseer'));
    writeFileSync(join(repo, '.overseer', 'config.json'), JSON.stringify({ maxAgents: 3 }));
    assert.equal(loadConfig({ OVERSEER_MAX_AGENTS: '' }, repo).maxAgents, 3);
  });

  test('home is always the resolved state dir, even if the file sets another', () => {
    const repo = freshDir('lc-home');
    gitInit(repo);
    mkdirSync(join(repo, '.overseer'));
    writeFileSync(join(repo, '.overseer', 'config.json'), JSON.stringify({ home: '/elsewhere', settingsDir: '/elsewhere' }));
    const env = { XDG_STATE_HOME: join(tmp, 'xdg-home') };
    const c = loadConfig(env, repo);
    assert.equal(c.home, projectStateDir(realpathSync(repo), env));
    assert.equal(c.settingsDir, join(realpathSync(repo), '.overseer'));
  });

  test('relative OVERSEER_HOME: file read from there, home absolute', () => {
    const base = freshDir('lc-rel');
    mkdirSync(join(base, 'mystate'));
    writeFileSync(join(base, 'mystate', 'config.json'), JSON.stringify({ maxAttempts: 5 }));
    const c = loadConfig({ OVERSEER_HOME: 'mystate' }, base);
    assert.equal(c.home, join(base, 'mystate'));
    assert.equal(c.maxAttempts, 5);
  });

  test('a bad env value is reported with the env var name and the file in the source', () => {
    const repo = freshDir('lc-bad-env');
    gitInit(repo);
    mkdirSync(join(repo, '.overseer'));
    const file = join(repo, '.overseer', 'config.json');
    writeFileSync(file, JSON.stringify({ maxAgents: 2 }));
    const msg = invalid(() => loadConfig({ OVERSEER_MAX_AGENTS: 'abc' }, repo));
    assert.match(msg, /OVERSEER_MAX_AGENTS/);
    assert.match(msg, /"abc"/);
    assert.ok(msg.includes(file), msg);
  });

  test('a bad env value without a file says environment', () => {
    const repo = freshDir('lc-bad-env-nofile');
    gitInit(repo);
    const msg = invalid(() => loadConfig({ OVERSEER_MAX_AGENTS: '0' }, repo));
    assert.match(msg, /configuration \(environment\)/);
  });

  test('an unknown key in config.json is rejected', () => {
    const repo = freshDir('lc-unknown');
    gitInit(repo);
    mkdirSync(join(repo, '.overseer'));
    writeFileSync(join(repo, '.overseer', 'config.json'), JSON.stringify({ maxAgent: 2 }));
    const msg = invalid(() => loadConfig({}, repo));
    assert.match(msg, /maxAgent/);
  });

  test('invalid JSON in config.json names the file', () => {
    const repo = freshDir('lc-badjson');
    gitInit(repo);
    mkdirSync(join(repo, '.overseer'));
    const file = join(repo, '.overseer', 'config.json');
    writeFileSync(file, '{ "maxAgents": 2, ');
    const msg = invalid(() => loadConfig({}, repo));
    assert.ok(msg.includes(file), msg);
    assert.match(msg, /not valid JSON/);
  });

  test('a database URL with a password in the project\'s config.json is refused (agents read that file), never echoing the password; without one it loads, and the environment may carry one', () => {
    const repo = freshDir('lc-dburl');
    gitInit(repo);
    mkdirSync(join(repo, '.overseer'));
    const file = join(repo, '.overseer', 'config.json');
    writeFileSync(file, JSON.stringify({ databaseUrl: 'postgres://crew:s3cret-pw@db.internal:5432/overseer' }));
    const msg = invalid(() => loadConfig({}, repo));
    assert.ok(msg.includes(file), msg);
    assert.match(msg, /OVERSEER_DATABASE_URL/);
    assert.doesNotMatch(msg, /s3cret-pw/);
    writeFileSync(file, JSON.stringify({ databaseUrl: 'postgres://crew@db.internal:5432/overseer' }));
    assert.equal(loadConfig({}, repo).databaseUrl, 'postgres://crew@db.internal:5432/overseer');
    assert.equal(loadConfig({ OVERSEER_DATABASE_URL: 'postgres://crew:pw@h/o' }, repo).databaseUrl, 'postgres://crew:pw@h/o');
  });
});

describe('packageRoot', () => {
  test('finds the repository root with package.json and prompts/', () => {
    const root = packageRoot();
    assert.ok(existsSync(join(root, 'package.json')));
    assert.ok(existsSync(join(root, 'prompts', 'child-preamble.md')));
  });
});
