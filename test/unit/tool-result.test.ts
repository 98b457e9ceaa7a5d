// okResult / errorResult / fit: JSON text + structuredContent, typed errors as `code: message`,
// zod paths, unknown errors as internal, and the 20,000-character cap.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { okResult, errorResult, formatZod, fit, MAX_RESULT_CHARS } from '../../src/tools/result.js';
import {
  OverseerError, InvalidInputError, NotFoundError, InvalidStateError, ForbiddenError, StoreBusyError, BudgetExceededError,
} from '../../src/errors.js';
import type { Logger } from '../../src/log.js';

function text(r: CallToolResult): string {
  assert.equal(r.content.length, 1);
  const c = r.content[0]!;
  assert.equal(c.type, 'text');
  return (c as { type: 'text'; text: string }).text;
}

function zodError(schema: z.ZodTypeAny, value: unknown): z.ZodError {
  const r = schema.safeParse(value);
  assert.equal(r.success, false);
  return (r as { error: z.ZodError }).error;
}

describe('okResult', () => {
  test('object → JSON text and the same object as structuredContent, no isError', () => {
    const v = { id: 'j-1', status: 'running', nested: { cost: 0.5, labels: ['a'] } };
    const r = okResult(v);
    assert.deepEqual(JSON.parse(text(r)), v);
    assert.deepEqual(r.structuredContent, v);
    assert.equal(r.isError, undefined);
  });

  test('arrays, strings, numbers and null → text only (structuredContent must be an object)', () => {
    for (const v of [[1, 2, 3], 'hello', 42, null, true]) {
      const r = okResult(v);
      assert.deepEqual(JSON.parse(text(r)), v);
      assert.equal('structuredContent' in r, false, JSON.stringify(v));
    }
  });

  test('a 200 KB object fits under the cap and keeps its keys', () => {
    const v = { id: 'j-1', a: 'x'.repeat(100_000), b: 'y'.repeat(100_000), small: 'keep me' };
    assert.ok(JSON.stringify(v).length > 200_000);
    const r = okResult(v);
    const t = text(r);
    assert.ok(t.length <= MAX_RESULT_CHARS, `text is ${t.length} chars`);
    const back = JSON.parse(t) as Record<string, string>;
    assert.deepEqual(Object.keys(back), ['id', 'a', 'b', 'small']);
    assert.equal(back.id, 'j-1');
    assert.equal(back.small, 'keep me');
    assert.ok(back.a!.startsWith('xxx'));
    assert.ok(back.a!.endsWith('… (truncated)'));
    assert.ok(back.b!.endsWith('… (truncated)'));
    assert.deepEqual(r.structuredContent, back, 'structuredContent is the fitted value too');
  });
});

describe('okResult is a plain object; the MCP layer serialises it', () => {
  const values: unknown[] = [
    { id: 'j-1', status: 'running', nested: { cost: 0.5, labels: ['a', 'b'] } },
    { text: 'quotes " and \\ backslashes\nnew lines\t tabs', unicode: 'é 日本 🚀 \u2028', empty: '', zero: -0 },
    { when: new Date(0), gone: undefined, fn: () => 1, nan: Number.NaN, inf: Infinity, deep: [[{ a: [null] }]] },
    { withToJson: { toJSON: () => ({ replaced: true }) } },
    {}, [], [1, 'two', { three: 3 }], 'a string', 42, null, true, undefined,
  ];
  test('nothing but JSON values: serialising and parsing it back gives the same object', () => {
    for (const v of values) {
      const r = okResult(v);
      assert.equal(Object.getPrototypeOf(r), Object.prototype, String(JSON.stringify(v)));
      assert.deepStrictEqual(Object.getOwnPropertySymbols(r), []);
      assert.deepStrictEqual(JSON.parse(JSON.stringify(r)), r, `value ${String(JSON.stringify(v))}`);
    }
  });
  test('structuredContent is the value as JSON has it (dates as strings, undefined fields gone), a copy', () => {
    const v = { a: 1, when: new Date(0), gone: undefined, list: [1] };
    const r = okResult(v);
    assert.deepStrictEqual(r.structuredContent, { a: 1, when: '1970-01-01T00:00:00.000Z', list: [1] });
    v.list.push(2);
    assert.deepStrictEqual((r.structuredContent as { list: number[] }).list, [1], 'a later change to the value is not in the result');
  });
  test('the wire text: the pretty JSON as content text, then the compact structuredContent', () => {
    assert.equal(JSON.stringify(okResult({ a: 1, b: ['x'] })), '{"content":[{"type":"text","text":"{\\n \\"a\\": 1,\\n \\"b\\": [\\n  \\"x\\"\\n ]\\n}"}],"structuredContent":{"a":1,"b":["x"]}}');
    assert.equal(JSON.stringify(okResult([1])), '{"content":[{"type":"text","text":"[\\n 1\\n]"}]}');
  });
});

describe('fit', () => {
  test('a value under the cap comes back unchanged', () => {
    const v = { a: 'x'.repeat(1000), list: [1, 2, 3] };
    assert.deepEqual(fit(v), v);
  });

  test('only the strings that are too long are shortened', () => {
    const v = { long: 'z'.repeat(50_000), short: 's'.repeat(100), n: 5, flag: true, none: null };
    const f = fit(v) as typeof v;
    assert.equal(f.short, v.short);
    assert.equal(f.n, 5);
    assert.equal(f.flag, true);
    assert.equal(f.none, null);
    assert.ok(f.long.length < v.long.length);
    assert.ok(JSON.stringify(f, null, 1).length <= MAX_RESULT_CHARS);
  });

  test('strings inside nested arrays and objects are shortened too', () => {
    const v = { outer: { inner: ['q'.repeat(60_000)] } };
    const f = fit(v) as typeof v;
    assert.ok(f.outer.inner[0]!.endsWith('… (truncated)'));
    assert.ok(JSON.stringify(f, null, 1).length <= MAX_RESULT_CHARS);
  });

  test('a long array of small items shrinks from the front (keeps the newest)', () => {
    const arr = Array.from({ length: 5000 }, (_, i) => ({ i, kind: 'event' }));
    const f = fit(arr) as typeof arr;
    assert.ok(Array.isArray(f));
    assert.ok(f.length < arr.length && f.length > 0);
    assert.ok(JSON.stringify(f, null, 1).length <= MAX_RESULT_CHARS);
    assert.equal(f.at(-1)!.i, 4999, 'the last element survives');
    assert.deepEqual(f, arr.slice(arr.length - f.length), 'a contiguous suffix of the input');
    // And it keeps as many as fit: one more element from the front would overflow.
    assert.ok(JSON.stringify(arr.slice(arr.length - f.length - 1), null, 1).length > MAX_RESULT_CHARS);
  });

  test('the cap is a parameter', () => {
    const f = fit({ s: 'w'.repeat(5000) }, 1000);
    assert.ok(JSON.stringify(f, null, 1).length <= 1000);
  });

  test('does not mutate its input', () => {
    const v = { s: 'x'.repeat(50_000) };
    fit(v);
    assert.equal(v.s.length, 50_000);
  });
});

describe('errorResult', () => {
  const cases: [OverseerError, string][] = [
    [new InvalidInputError('timeout_s must be positive'), 'invalid_input'],
    [new NotFoundError('no agent j-404; recent: j-1, j-2'), 'not_found'],
    [new InvalidStateError('j-1 is running; pause it first'), 'invalid_state'],
    [new ForbiddenError('j-2 is not in your subtree'), 'forbidden'],
    [new OverseerError('conflict', 'branch already exists'), 'conflict'],
  ];
  for (const [err, code] of cases) {
    test(`${err.name} → "${code}: message", isError`, () => {
      const r = errorResult(err);
      assert.equal(r.isError, true);
      assert.equal(text(r), `${code}: ${err.message}`);
      assert.equal('structuredContent' in r, false);
    });
  }

  test('StoreBusyError → store_busy with its retry advice', () => {
    const t = text(errorResult(new StoreBusyError(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))));
    assert.match(t, /^store_busy: /);
    assert.match(t, /Retry/);
  });

  test('BudgetExceededError → "budget_exceeded: message", isError, and its numbers as structuredContent', () => {
    const details = { budget: { kind: 'house', key: 'house', limit_usd: 2, spent_usd: 1, reserved_usd: 0.8 }, asked_usd: 0.5 };
    const r = errorResult(new BudgetExceededError('Spawning this agent would exceed the house budget …', details));
    assert.equal(r.isError, true);
    assert.equal(text(r), 'budget_exceeded: Spawning this agent would exceed the house budget …');
    assert.deepEqual(r.structuredContent, { error: 'budget_exceeded', ...details });
  });

  test('an OverseerError is not logged as unexpected', () => {
    const logged: unknown[] = [];
    const log = { error: (...a: unknown[]) => logged.push(a) } as unknown as Logger;
    errorResult(new NotFoundError('x'), log);
    assert.equal(logged.length, 0);
  });

  test('ZodError → invalid_input naming the path of each issue', () => {
    const schema = z.object({ agents: z.array(z.object({ id: z.string(), timeout_s: z.number().positive() })) });
    const err = zodError(schema, { agents: [{ id: 'a', timeout_s: 5 }, { id: 7, timeout_s: -1 }] });
    const t = text(errorResult(err));
    assert.match(t, /^invalid_input: /);
    assert.match(t, /agents\.1\.id: Expected string, received number/);
    assert.match(t, /agents\.1\.timeout_s: /);
    assert.equal(errorResult(err).isError, true);
  });

  test('a root-level zod issue is named (input)', () => {
    const err = zodError(z.object({ a: z.string() }), 'not an object');
    assert.match(formatZod(err), /^\(input\): Expected object/);
  });

  test('an unknown Error → internal, and it is logged', () => {
    const logged: unknown[][] = [];
    const log = { error: (...a: unknown[]) => logged.push(a) } as unknown as Logger;
    const err = new TypeError('cannot read properties of undefined');
    const r = errorResult(err, log);
    assert.equal(text(r), 'internal: cannot read properties of undefined');
    assert.equal(r.isError, true);
    assert.equal(logged.length, 1);
    assert.deepEqual(logged[0]![0], { err });
  });

  test('a thrown non-Error → internal with its string form', () => {
    assert.equal(text(errorResult('plain string')), 'internal: plain string');
    assert.equal(text(errorResult(42)), 'internal: 42');
  });

  test('a huge message is cut to the cap', () => {
    const t = text(errorResult(new InvalidInputError('m'.repeat(50_000))));
    assert.equal(t.length, MAX_RESULT_CHARS);
    assert.ok(t.startsWith('invalid_input: mmm'));
  });
});
