// The pure half of learning triage: secret detection (real formats vs innocent lookalikes),
// shape checks, title normalisation, word sets and Jaccard, content merging, and the FTS
// query builder that keeps user text away from FTS5 syntax.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanLearning, detectSecret, entropy, mergeContent, normalizeTags, secretReason, sentences, unionTags } from '../../src/kb/triage.js';
import { distinctiveTerms, ftsQuery, ftsQueryOfTerms, jaccard, normTitle, tokens, wordSet } from '../../src/kb/text.js';

// Secrets are assembled at run time so this file does not itself look like it leaks keys.
const rnd = (n: number, alphabet: string, seed: number): string => {
  let a = seed >>> 0;
  let s = '';
  for (let i = 0; i < n; i++) {
    // mulberry32
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    s += alphabet[((t ^ (t >>> 14)) >>> 0) % alphabet.length];
  }
  return s;
};
const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';

const SECRETS: [string, string, RegExp][] = [
  ['Anthropic key', `export ANTHROPIC_API_KEY set, e.g. ${'sk-'}ant-api03-${rnd(40, B62, 1)}`, /sk-/],
  ['OpenAI project key', `the client uses ${'sk-'}proj-${rnd(32, B62, 2)} for calls`, /sk-/],
  ['GitHub PAT classic', `push with ${'ghp_'}${rnd(36, B62, 3)} as the password`, /GitHub/],
  ['GitHub OAuth token', `token ${'gho_'}${rnd(36, B62, 4)}`, /GitHub/],
  ['GitHub fine-grained PAT', `${'github_pat_'}${rnd(22, B62, 5)}_${rnd(59, B62, 6)}`, /GitHub/],
  ['AWS access key id', `aws configure with ${'AKIA'}${rnd(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 7)} then deploy`, /AWS/],
  ['Slack bot token', `${'xoxb-'}123456789012-1234567890123-${rnd(24, B62, 8)}`, /Slack/],
  ['Slack user token', `use ${'xoxp-'}123456789012-${rnd(20, B62, 9)}`, /Slack/],
  ['RSA private key', `-----BEGIN RSA ${'PRIVATE KEY'}-----\nMIIEowIBAAKCAQEA${rnd(40, B62, 10)}\n-----END RSA PRIVATE KEY-----`, /private key/],
  ['OpenSSH private key', `-----BEGIN OPENSSH ${'PRIVATE KEY'}-----\nb3BlbnNzaC1rZXktdjEAAAAA`, /private key/],
  ['password assignment', 'log in with password=hunter2x to the staging box', /password=…/],
  ['env-style DB password', 'the .env has DB_PASSWORD: "s3cr3t!pass" which the seeder needs', /db_password=…/],
  ['token in YAML', 'deploy.yml: token: 9f8e7d6c5b4a-prod', /token=…/],
  ['JSON api_key', 'config.json contains "api_key": "AbCdEf123456Gh" for the sandbox', /api_key=…/],
  ['URL credentials', 'connect to postgres://admin:Sup3rS3cret@db.internal:5432/app for the reports', /URL/],
  ['random base64', `the signing secret is ${rnd(40, `${B62}+/`, 11)} keep it`, /base64/],
  ['random hex', `key ${rnd(64, HEX, 12)} decrypts the fixtures`, /hex/],
  ['JWT', `curl -H 'x-auth: ${'eyJ'}hbGciOiJIUzI1NiJ9.${'eyJ'}zdWIiOiIxMjM0NTY3ODkwIn0.${rnd(43, B62, 13)}'`, /web token/],
  ['Google API key', `maps use ${'AIza'}${rnd(35, B62, 14)}`, /Google/],
  ['Stripe live key', `billing tests used ${'sk_'}live_${rnd(24, B62, 15)} by mistake`, /Stripe/],
  ['bearer header', `Authorization: Bearer ${rnd(32, B62, 16)}`, /bearer|base64/],
  ['npm token', `//registry.npmjs.org/:_authToken=${'npm_'}${rnd(36, B62, 17)}`, /npm|credential/],
];

const INNOCENT: string[] = [
  'Use the token bucket algorithm for rate limiting requests to the API.',
  'The password reset flow sends an email link; passwords are hashed with bcrypt before storage.',
  'interface Session { token: string; expiresAt: number } lives in src/auth/session.ts',
  'Set API_KEY=<your-key> in .env before running the integration tests.',
  'CI exports GITHUB_TOKEN=${GITHUB_TOKEN} so the release script can push tags.',
  'Install scikit-learn (sk-learn) with pip; import it as sklearn.',
  'Commit 3f786850e387550fdab836ed7e6dc881de23001b fixed the race in the scheduler.',
  'Request id 123e4567-e89b-12d3-a456-426614174000 shows up twice in the logs.',
  'The handler lives at packages/server/src/handlers/authentication/middleware.ts',
  'Test should_return_empty_list_when_no_entries_match_query_string covers this.',
  'AKIA is the prefix of AWS access key ids; never paste one into a note.',
  'max_tokens=4096 keeps responses short enough for the parser.',
  'The secret sauce is caching the compiled templates between requests.',
  'In the schema, password: required and token: optional are enforced by zod.',
  'Bearer tokens go in the Authorization header, never in the query string.',
  'package-lock has "integrity": "sha512-Xw2vY8b1zQ7pW3rKc9sT4uN6mL0jH5gF2dE1aB8cV7xZ3yQ9wR4tU6iO0pA1sD2fG3hJ4kL5zX6cV7bN8mQ9wE0r==" for each package.',
  'Use handleUserAuthenticationFactorVerification2 for the second step.',
  'The token: refreshed event fires after the session renews itself.',
  'A sha256 checksum like e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 is the empty file.',
  'desk-top layout uses the task-runner from tools/scripts/build-all-packages-in-order.sh',
];

describe('detectSecret', () => {
  for (const [name, text, kind] of SECRETS) {
    test(`flags ${name}`, () => {
      const k = detectSecret(text);
      assert.ok(k, `expected a secret in: ${name}`);
      assert.match(k, kind);
    });
  }

  for (const text of INNOCENT) {
    test(`leaves alone: ${text.slice(0, 50)}`, () => {
      assert.equal(detectSecret(text), undefined);
    });
  }

  test('the reason names the kind and never echoes the secret', () => {
    for (const [, text] of SECRETS) {
      const c = cleanLearning({ title: 'How to deploy staging', content: `Steps that work: ${text}` });
      assert.ok(c.ok);
      const reason = secretReason(c.learning);
      assert.ok(reason);
      assert.match(reason, /looks like it contains a secret/);
      // No 12-character start of the text's long random-looking tokens (they have digits) appears in the reason.
      for (const tok of (text.match(/[A-Za-z0-9+/_=-]{12,}/g) ?? []).filter((t) => /\d/.test(t))) assert.ok(!reason.includes(tok.slice(0, 12)), `reason leaks ${tok.slice(0, 12)}: ${reason}`);
    }
  });

  test('short assigned values are not echoed either', () => {
    for (const [text, value] of [['password=hunter2x here', 'hunter2x'], ['DB_PASSWORD: "s3cr3t!pass"', 's3cr3t'], ['postgres://admin:Sup3rS3cret@db', 'Sup3rS3cret']] as const) {
      const c = cleanLearning({ title: 'Staging access', content: `For staging: ${text}` });
      assert.ok(c.ok);
      const reason = secretReason(c.learning)!;
      assert.ok(reason, text);
      assert.ok(!reason.includes(value), reason);
    }
  });

  test('a secret in the title or the tags counts too', () => {
    const key = `${'ghp_'}${rnd(36, B62, 20)}`;
    const t = cleanLearning({ title: `use ${key}`, content: 'pushing to the mirror needs a token in the remote url' });
    assert.ok(t.ok && secretReason(t.learning));
    const g = cleanLearning({ title: 'mirror pushes', content: 'pushing to the mirror needs a token in the remote url', tags: [key] });
    assert.ok(g.ok && secretReason(g.learning));
  });

  test('entropy: uniform text is 0, random base64 is high', () => {
    assert.equal(entropy('aaaaaaaa'), 0);
    assert.ok(entropy(rnd(40, B62, 30)) > 4.2);
    assert.ok(entropy('handleuserauthentication') < 4);
  });
});

describe('cleanLearning', () => {
  test('empty, whitespace and too short titles and contents are rejected with a reason', () => {
    const cases: [string, string, RegExp][] = [
      ['', 'a long enough content for the checks', /title is empty/],
      ['   \n ', 'a long enough content for the checks', /title is empty/],
      ['ab', 'a long enough content for the checks', /title is too short/],
      ['-- !! --', 'a long enough content for the checks', /title is too short/],
      ['A fine title', '', /content is empty/],
      ['A fine title', '  \n\t ', /content is empty/],
      ['A fine title', 'too short text', /content is too short \(14 characters, at least 20\)/],
    ];
    for (const [title, content, re] of cases) {
      const r = cleanLearning({ title, content });
      assert.equal(r.ok, false, `${JSON.stringify(title)} / ${JSON.stringify(content)}`);
      if (!r.ok) assert.match(r.reason, re);
    }
  });

  test('a good learning is trimmed, its tags normalised, its title normalised', () => {
    const r = cleanLearning({ title: '  Flaky   Login test ', content: '  Run with TZ=UTC or the date test fails.  ', tags: [' CI ', 'ci', 'Time Zones', ''], scope: 'global' });
    assert.ok(r.ok);
    assert.deepEqual(r.learning, {
      title: 'Flaky Login test', content: 'Run with TZ=UTC or the date test fails.', tags: ['ci', 'time-zones'], scope: 'global', normTitle: 'flaky login test',
    });
  });

  test('exactly 20 characters of content is enough', () => {
    assert.equal(cleanLearning({ title: 'Edge', content: 'x'.repeat(20) }).ok, true);
    assert.equal(cleanLearning({ title: 'Edge', content: 'x'.repeat(19) }).ok, false);
  });
});

describe('normTitle and tokens', () => {
  test('case, punctuation and whitespace fold', () => {
    assert.equal(normTitle('  Flaky-Tests:   CI!! '), 'flaky tests ci');
    assert.equal(normTitle('flaky tests — CI'), normTitle('FLAKY_TESTS (ci)'));
    assert.equal(normTitle('Ünïcode Straße'), 'ünïcode straße');
    assert.equal(normTitle('!!!'), '');
  });

  test('tokens keep letters and digits of any script', () => {
    assert.deepEqual(tokens('Node 20: better-sqlite3 12.x — 日本語 ok'), ['node', '20', 'better', 'sqlite3', '12', 'x', '日本語', 'ok']);
  });
});

describe('wordSet and jaccard', () => {
  test('stop words and 1-character tokens do not count', () => {
    assert.deepEqual([...wordSet('The cache is a big win for the build')].sort(), ['big', 'build', 'cache', 'win']);
  });

  test('jaccard of sets', () => {
    const a = new Set(['a', 'b', 'c', 'd']);
    assert.equal(jaccard(a, new Set(['a', 'b', 'c', 'd'])), 1);
    assert.equal(jaccard(a, new Set(['a', 'b', 'e', 'f'])), 2 / 6);
    assert.equal(jaccard(a, new Set(['x'])), 0);
    assert.equal(jaccard(new Set(), new Set()), 0);
  });

  test('a rephrasing with the same words is similar, a different topic is not', () => {
    const a = wordSet('Run the integration tests with TZ=UTC or the date formatting test fails on CI machines');
    const b = wordSet('The date formatting test fails on CI machines unless integration tests run with TZ=UTC');
    const c = wordSet('Webpack caches the compiled assets under node_modules/.cache; delete it after upgrades');
    assert.ok(jaccard(a, b) >= 0.6, String(jaccard(a, b)));
    assert.ok(jaccard(a, c) < 0.1);
  });
});

describe('distinctiveTerms', () => {
  test('drops stop words, ranks by frequency then length, caps the count', () => {
    const t = distinctiveTerms('Fix the flaky login test. The login test fails when the clock changes; login is retried.', 3);
    assert.deepEqual(t, ['login', 'test', 'changes']);
  });

  test('only stop words → they are used after all; no words → []', () => {
    assert.deepEqual(distinctiveTerms('the and of'), ['the', 'and', 'of']);
    assert.deepEqual(distinctiveTerms('?! -- ...'), []);
  });
});

describe('ftsQuery', () => {
  test('every term is double-quoted and OR-ed; operators become plain words', () => {
    assert.equal(ftsQuery('flaky AND login'), '"flaky" OR "login"');
    assert.equal(ftsQuery('NOT "x" (y) * col:z ^w NEAR(a b)'), ftsQuery('not x y col z w near a b'));
  });

  test('no words → undefined', () => {
    for (const q of ['', '   ', '"', '*', '()', '^-+:']) assert.equal(ftsQuery(q), undefined, JSON.stringify(q));
  });

  test('a huge query is capped', () => {
    const q = ftsQuery(Array.from({ length: 400 }, (_, i) => `word${i}`).join(' '))!;
    assert.equal(q.split(' OR ').length, 32);
  });

  test('ftsQueryOfTerms re-tokenises its terms', () => {
    assert.equal(ftsQueryOfTerms(['a"b', 'c d']), '"a" OR "b" OR "c" OR "d"');
    assert.equal(ftsQueryOfTerms([]), undefined);
  });
});

describe('merging', () => {
  test('new sentences are appended, known ones (any case/punctuation) are not', () => {
    const m = mergeContent('Run tests with TZ=UTC. The date test fails otherwise.', 'run tests with tz=utc!  Also set LANG=C for the sort test.');
    assert.equal(m.added, true);
    assert.equal(m.content, 'Run tests with TZ=UTC. The date test fails otherwise.\n\nAlso set LANG=C for the sort test.');
  });

  test('nothing new → unchanged, added false', () => {
    const base = 'Run tests with TZ=UTC. The date test fails otherwise.';
    assert.deepEqual(mergeContent(base, 'The date test fails otherwise. Run tests with TZ=UTC.'), { content: base, added: false });
  });

  test('a reordered sentence with the same words is not new; a different one is', () => {
    const base = 'The date formatting test fails on CI machines unless the integration tests run with TZ=UTC set.';
    assert.equal(mergeContent(base, 'Unless TZ=UTC is set, the date formatting test fails on CI machines when integration tests run.').added, false);
    assert.equal(mergeContent(base, 'Webpack needs its cache cleared after an upgrade.').added, true);
  });

  test('sentences split on . ! ? and new lines', () => {
    assert.deepEqual(sentences('One. Two! Three?\n- four\n\nfive'), ['One.', 'Two!', 'Three?', '- four', 'five']);
  });

  test('tags union keeps order and normalises', () => {
    assert.deepEqual(unionTags(['ci', 'tests'], ['Tests', 'Time zones']), ['ci', 'tests', 'time-zones']);
    assert.deepEqual(normalizeTags(Array.from({ length: 15 }, (_, i) => `t${i}`)).length, 10);
  });
});
