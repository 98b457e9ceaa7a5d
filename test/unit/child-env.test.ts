// What a child inherits of the hub's environment (src/launch/childEnv.ts): the provider's settings
// pass through; the lead's session variables and the hub's database URL (it carries the password)
// do not.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASE_CREDENTIAL_VARS, childEnvFrom, databaseCredentialFiles } from '../../src/launch/childEnv.js';

describe('childEnvFrom', () => {
  test('keeps the provider\'s settings, drops the lead\'s session and the hub\'s database URL', () => {
    const env = childEnvFrom({
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', PATH: '/usr/bin', CLAUDE_CODE_SESSION_ID: 'lead-session', OVERSEER_TOKEN: 'lead-token',
      OVERSEER_DATABASE_URL: 'postgres://overseer:s3cret@db:5432/crew',
    });
    assert.deepEqual(env, { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', PATH: '/usr/bin' });
    assert.ok(!JSON.stringify(env).includes('s3cret'));
  });

  test('every database credential variable is dropped: the URL, its alias DATABASE_URL and libpq\'s PG* variables', () => {
    const given: NodeJS.ProcessEnv = { PATH: '/usr/bin', PGDATA_IS_NOT_LIBPQ: 'kept' };
    for (const k of DATABASE_CREDENTIAL_VARS) given[k] = `value-of-${k}`;
    const env = childEnvFrom(given);
    assert.deepEqual(env, { PATH: '/usr/bin', PGDATA_IS_NOT_LIBPQ: 'kept' });
    for (const k of ['OVERSEER_DATABASE_URL', 'DATABASE_URL', 'PGHOST', 'PGHOSTADDR', 'PGPORT', 'PGDATABASE', 'PGUSER', 'PGPASSWORD', 'PGPASSFILE', 'PGSERVICE',
      'PGSERVICEFILE', 'PGSSLMODE', 'PGSSLCERT', 'PGSSLKEY', 'PGSSLROOTCERT', 'PGSSLPASSWORD', 'PGOPTIONS']) {
      assert.ok(DATABASE_CREDENTIAL_VARS.includes(k), `${k} is in the list (docs/store-plan.md §5)`);
    }
  });
});

describe('databaseCredentialFiles', () => {
  test('~/.pgpass, PGPASSFILE, PGSSLKEY, PGSSLCERT and the sslkey=/sslcert=/passfile= of every database URL, absolute, once each', () => {
    const files = databaseCredentialFiles(
      { HOME: '/home/me', PGPASSFILE: '/etc/crew.pgpass', PGSSLKEY: '/k/env.key', PGSSLCERT: '/k/env.crt', PGSSLROOTCERT: '/k/ca.pem', DATABASE_URL: 'postgres://a@h/d?sslkey=/k/alias.key' },
      ['postgresql://crew:pw@db:5432/crew?sslmode=verify-full&sslkey=%2Fk%2Furl.key&sslcert=/k/url.crt&sslrootcert=/k/ca.pem&passfile=/k/pass', 'postgres://u@h/d?sslkey=/k/env.key'],
    );
    assert.deepEqual(files, ['/home/me/.pgpass', '/etc/crew.pgpass', '/k/env.key', '/k/env.crt', '/k/url.key', '/k/url.crt', '/k/pass', '/k/alias.key']);
  });

  test('a relative path, an empty value or a string that is not a URL names nothing', () => {
    assert.deepEqual(databaseCredentialFiles({ PGSSLKEY: 'rel.key', OVERSEER_DATABASE_URL: 'host=db user=me sslkey=/k/x' }, [undefined, 'postgres://u@h/d?sslkey=&sslcert=rel.crt']), []);
  });
});

