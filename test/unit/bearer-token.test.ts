// The hub's Authorization header parsing (src/server/http.ts bearerToken) takes exactly what
// /^Bearer\s+(\S+)$/i takes: the scheme in any case, whitespace, one run of non-whitespace to
// the end. Anything else is no token (401), never a token with a space or an empty one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearerToken } from '../../src/server/http.js';

const RULE = /^Bearer\s+(\S+)$/i;

test('bearerToken accepts what the Bearer rule accepts and nothing else', () => {
  const cases: (string | undefined)[] = [
    undefined, '', 'Bearer', 'Bearer ', 'Bearer  ', 'Bearer x', 'bearer  tok', 'BEARER\ttok', 'Bearer tok ', 'Bearer to k',
    'Bearerx tok', 'Basic abc', 'Bearer \u00a0tok', 'Bearer tok\u2028', ' Bearer tok', 'Bearer\u3000tok', 'Bearer x\n',
    'Bearer\ntok', 'Bearertok', 'Bearer abc.def-ghi_jkl', `Bearer ${'a'.repeat(5000)}`, 'Bear tok', 'Bearer\u00a0\u00a0t',
  ];
  for (const c of cases) assert.equal(bearerToken(c), RULE.exec(c ?? '')?.[1], `header ${JSON.stringify(c)}`);
  assert.equal(bearerToken('Bearer secret-token'), 'secret-token');
  assert.equal(bearerToken('Bearer two words'), undefined);
});
