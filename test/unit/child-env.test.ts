// What a child inherits of the hub's environment (src/launch/childEnv.ts): the provider's settings
// pass through; the lead's session variables and the hub's database URL (it carries the password)
// do not.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { childEnvFrom } from '../../src/launch/childEnv.js';

describe('childEnvFrom', () => {
  test('keeps the provider\'s settings, drops the lead\'s session and the hub\'s database URL', () => {
    const env = childEnvFrom({
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', PATH: '/usr/bin', CLAUDE_CODE_SESSION_ID: 'lead-session', OVERSEER_TOKEN: 'lead-token',
      OVERSEER_DATABASE_URL: 'postgres://overseer:s3cret@db:5432/crew',
    });
    assert.deepEqual(env, { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', PATH: '/usr/bin' });
    assert.ok(!JSON.stringify(env).includes('s3cret'));
  });
});
