// The compiled fast path of tool-input validation (src/tools/fastParse.ts) never disagrees with
// zod: for every zod schema exported by src/tools/*Schemas.ts, over valid inputs and many broken
// ones derived from the schema, whatever the fast path accepts zod accepts too, with the same
// output (defaults, stripped keys); what it does not know it leaves to zod (NO).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z, type ZodTypeAny } from 'zod';
import { NO, fastParse, fastParses } from '../../src/tools/fastParse.js';
import { ReadNoteInput, WriteNoteInput } from '../../src/tools/noteSchemas.js';
import { ReportStatusInput } from '../../src/tools/agentSchemas.js';
import { objectInside } from '../../src/tools/registry.js';

const TOOLS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'tools');

async function allSchemas(): Promise<[string, ZodTypeAny][]> {
  const out: [string, ZodTypeAny][] = [];
  for (const f of readdirSync(TOOLS_DIR).filter((x) => x.endsWith('Schemas.ts')).sort()) {
    const mod = (await import(path.join(TOOLS_DIR, f))) as Record<string, unknown>;
    for (const [name, v] of Object.entries(mod)) if (v instanceof z.ZodType) out.push([`${f}:${name}`, v as ZodTypeAny]);
  }
  return out;
}

const WEIRD: unknown[] = [undefined, null, 0, -1, 1.5, NaN, Infinity, '', ' ', 'x', 'a/b', '/a', 'a//b', 'x'.repeat(300), '\u0000', true, false, [], [1], {}, { a: 1 }];

/** Values for schema s: some valid (when the schema allows it), many not. Bounded. */
function samples(s: ZodTypeAny, depth = 0): unknown[] {
  if (depth > 4) return WEIRD;
  if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) return [undefined, null, ...samples(s.unwrap() as ZodTypeAny, depth + 1)];
  if (s instanceof z.ZodDefault) return [undefined, ...samples(s._def.innerType as ZodTypeAny, depth + 1)];
  if (s instanceof z.ZodEffects) return samples(s.innerType() as ZodTypeAny, depth + 1);
  if (s instanceof z.ZodString) {
    let min = 0;
    let max = 50;
    for (const c of s._def.checks) {
      if (c.kind === 'min') min = c.value;
      if (c.kind === 'max') max = Math.min(max, c.value);
    }
    return ['notes/plan', 'src/a.ts', 'a'.repeat(Math.max(min, 1)), 'a'.repeat(min), 'a'.repeat(max), 'a'.repeat(max + 1), ' x ', 'x\ny', ...WEIRD];
  }
  if (s instanceof z.ZodNumber) {
    const vals = [0, 1, 5, 60, 600, 86_400, 86_401, -1, 2.5, ...WEIRD];
    for (const c of s._def.checks) if (c.kind === 'min' || c.kind === 'max') vals.push(c.value, c.value - 1, c.value + 1, c.value + 0.5);
    return vals;
  }
  if (s instanceof z.ZodEnum) return [...(s.options as unknown[]), 'nope', ...WEIRD];
  if (s instanceof z.ZodLiteral) return [s.value, ...WEIRD];
  if (s instanceof z.ZodArray) {
    const item = samples(s.element as ZodTypeAny, depth + 1);
    return [[], [item[0]], item.slice(0, 3), [item[0], item[1]], Array.from({ length: 201 }, () => item[0]), 'x', null, [null]];
  }
  if (s instanceof z.ZodObject) {
    const shape = s.shape as Record<string, ZodTypeAny>;
    const keys = Object.keys(shape);
    const each = Object.fromEntries(keys.map((k) => [k, samples(shape[k]!, depth + 1).slice(0, depth > 1 ? 3 : 40)]));
    const base = (i: number): Record<string, unknown> => Object.fromEntries(keys.map((k) => [k, each[k]![i % each[k]!.length]]).filter(([, v]) => v !== undefined));
    const out: unknown[] = [base(0), base(2), {}, null, [], 'x', { ...base(0), extra: 1 }, JSON.parse('{"__proto__":{"polluted":1}}')];
    for (const k of keys) for (const v of each[k]!) out.push({ ...base(0), [k]: v }, { ...base(2), [k]: v });
    for (const k of keys) {
      const b = base(0);
      delete b[k];
      out.push(b);
    }
    return out;
  }
  return WEIRD;
}

test('the fast path accepts only what zod accepts, with the same output, on every tool schema', async () => {
  const schemas = await allSchemas();
  assert.ok(schemas.length > 40, `found ${schemas.length} schemas`);
  let accepted = 0;
  let checked = 0;
  for (const [name, s] of schemas) {
    for (const top of new Set([s, objectInside(s)])) {
      for (const v of samples(top)) {
        checked++;
        const fast = fastParse(top, v);
        if (fast === NO) continue;
        accepted++;
        const slow = top.safeParse(v);
        assert.ok(slow.success, `${name}: the fast path accepted ${JSON.stringify(v)?.slice(0, 200)}, zod refused it: ${slow.success ? '' : slow.error.message}`);
        assert.deepStrictEqual(fast, slow.data, `${name}: outputs differ for ${JSON.stringify(v)?.slice(0, 200)}`);
      }
    }
  }
  assert.ok(checked > 5000, `checked ${checked} inputs`);
  assert.ok(accepted > 500, `the fast path accepted only ${accepted} of ${checked} inputs: it should answer for valid ones`);
});

test("the hot tools' inputs take the fast path; what it cannot know goes to zod", () => {
  for (const s of [ReadNoteInput, WriteNoteInput, ReportStatusInput]) assert.ok(fastParses(s), 'compiled');
  assert.deepEqual(fastParse(ReadNoteInput, { key: 'plan/api' }), { key: 'plan/api' });
  assert.deepEqual(fastParse(WriteNoteInput, { key: 'a/b', value: 'v', expected_version: 0 }), { key: 'a/b', value: 'v', expected_version: 0 });
  // invalid: left to zod, which words the error
  for (const bad of [{ key: '/a' }, { key: 'a', extra: 1 }, { key: 'a', offset: -1 }, { key: 'a', offset: 1.5 }, { key: 'x\n' }, null, []]) assert.equal(fastParse(ReadNoteInput, bad), NO);
  // kinds it does not compile
  assert.equal(fastParses(z.object({ a: z.string().transform((x) => x.length) })), false);
  assert.equal(fastParses(z.object({ a: z.string().trim() })), false);
  assert.equal(fastParses(z.object({ a: z.union([z.string(), z.number()]) })), false);
  assert.equal(fastParses(z.object({ a: z.coerce.number() })), false);
  assert.equal(fastParse(z.object({ a: z.string().email() }), { a: 'x@y.z' }), NO);
  // a default runs through its inner schema, as zod's does
  assert.deepEqual(fastParse(z.object({ n: z.number().int().default(5) }), {}), { n: 5 });
  // passthrough keeps unknown keys but never a __proto__ key
  const pass = z.object({ a: z.string() }).passthrough();
  assert.deepEqual(fastParse(pass, { a: 'x', b: 2 }), { a: 'x', b: 2 });
  assert.equal(fastParse(pass, JSON.parse('{"a":"x","__proto__":{"p":1}}')), NO);
});
