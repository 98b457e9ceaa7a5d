// A fast path for zod's parse of a tool's input, for inputs zod would accept. Every tool call
// validated its arguments with zod v3, which allocates parse contexts, paths and statuses for
// every field (≈ 7 µs for read_note's one key, and a sixth of all the bytes a busy hub allocated:
// docs/performance-native-mcp.md). A schema made only of the kinds below is compiled once into a
// plain function that returns what zod's parse would return, or NO when it cannot say: the value
// is invalid (zod then runs and writes the error, so every error text stays zod's) or the schema
// uses something not compiled here (then zod always runs). It never accepts what zod refuses:
// test/unit/fast-parse.test.ts compares the two on every tool's schema.
import { z, type ZodTypeAny } from 'zod';

/** "Let zod decide". */
export const NO: unique symbol = Symbol('zod decides');
type Parser = (v: unknown) => unknown;

const compiled = new WeakMap<ZodTypeAny, Parser | null>();

/** What schema.parse(v) returns, or NO (invalid, or a schema this does not compile: use zod). */
export function fastParse(schema: ZodTypeAny, v: unknown): unknown {
  let p = compiled.get(schema);
  if (p === undefined) {
    p = compile(schema) ?? null;
    compiled.set(schema, p);
  }
  return p ? p(v) : NO;
}

/** Whether the schema compiles (for tests). */
export function fastParses(schema: ZodTypeAny): boolean {
  return compile(schema) !== undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

function compile(s: ZodTypeAny): Parser | undefined {
  if (s instanceof z.ZodString) return stringParser(s);
  if (s instanceof z.ZodNumber) return numberParser(s);
  if (s instanceof z.ZodBoolean) return s._def.coerce ? undefined : (v) => (typeof v === 'boolean' ? v : NO);
  if (s instanceof z.ZodEnum) {
    const values = new Set<unknown>(s.options as unknown[]);
    return (v) => (typeof v === 'string' && values.has(v) ? v : NO);
  }
  if (s instanceof z.ZodLiteral) {
    const value: unknown = s.value;
    return (v) => (v === value ? v : NO);
  }
  if (s instanceof z.ZodOptional) {
    const inner = compile(s.unwrap() as ZodTypeAny);
    return inner && ((v) => (v === undefined ? undefined : inner(v)));
  }
  if (s instanceof z.ZodNullable) {
    const inner = compile(s.unwrap() as ZodTypeAny);
    return inner && ((v) => (v === null ? null : inner(v)));
  }
  if (s instanceof z.ZodDefault) {
    const inner = compile(s._def.innerType as ZodTypeAny);
    const dflt = s._def.defaultValue as () => unknown;
    return inner && ((v) => inner(v === undefined ? dflt() : v));
  }
  if (s instanceof z.ZodArray) return arrayParser(s);
  if (s instanceof z.ZodObject) return objectParser(s);
  if (s instanceof z.ZodEffects) {
    const effect = s._def.effect as { type: string; refinement?: (v: unknown, ctx: unknown) => unknown };
    if (effect.type !== 'refinement' || !effect.refinement) return undefined; // transforms, preprocess: zod
    const inner = compile(s.innerType() as ZodTypeAny);
    const refine = effect.refinement;
    return inner && ((v) => {
      const out = inner(v);
      if (out === NO) return NO;
      let failed = false;
      const ctx = { addIssue: () => { failed = true; }, path: [] as (string | number)[] };
      const r = refine(out, ctx);
      if (r instanceof Promise) return NO; // an async refinement: zod's parse throws for it
      return failed ? NO : out;
    });
  }
  return undefined;
}

function stringParser(s: z.ZodString): Parser | undefined {
  if (s._def.coerce) return undefined;
  const tests: ((x: string) => boolean)[] = [];
  for (const c of s._def.checks) {
    switch (c.kind) {
      case 'min': { const n = c.value; tests.push((x) => x.length >= n); break; }
      case 'max': { const n = c.value; tests.push((x) => x.length <= n); break; }
      case 'length': { const n = c.value; tests.push((x) => x.length === n); break; }
      case 'regex': { const re = c.regex; tests.push((x) => { re.lastIndex = 0; return re.test(x); }); break; }
      case 'startsWith': { const p = c.value; tests.push((x) => x.startsWith(p)); break; }
      case 'endsWith': { const p = c.value; tests.push((x) => x.endsWith(p)); break; }
      case 'includes': { if (c.position !== undefined) return undefined; const p = c.value; tests.push((x) => x.includes(p)); break; }
      default: return undefined; // trim, toLowerCase (transforms), email, url, uuid, datetime…: zod
    }
  }
  return (v) => (typeof v === 'string' && tests.every((t) => t(v)) ? v : NO);
}

function numberParser(s: z.ZodNumber): Parser | undefined {
  if (s._def.coerce) return undefined;
  const tests: ((x: number) => boolean)[] = [];
  for (const c of s._def.checks) {
    switch (c.kind) {
      case 'int': tests.push((x) => Number.isInteger(x)); break;
      case 'min': { const n = c.value; tests.push(c.inclusive ? (x) => x >= n : (x) => x > n); break; }
      case 'max': { const n = c.value; tests.push(c.inclusive ? (x) => x <= n : (x) => x < n); break; }
      case 'finite': tests.push((x) => Number.isFinite(x)); break;
      default: return undefined; // multipleOf: zod
    }
  }
  return (v) => (typeof v === 'number' && !Number.isNaN(v) && tests.every((t) => t(v)) ? v : NO);
}

function arrayParser(s: z.ZodArray<ZodTypeAny>): Parser | undefined {
  const item = compile(s.element);
  if (!item) return undefined;
  const { minLength, maxLength, exactLength } = s._def;
  return (v) => {
    if (!Array.isArray(v)) return NO;
    if ((minLength && v.length < minLength.value) || (maxLength && v.length > maxLength.value) || (exactLength && v.length !== exactLength.value)) return NO;
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = item(v[i]);
      if (x === NO) return NO;
      out[i] = x;
    }
    return out;
  };
}

function objectParser(s: z.AnyZodObject): Parser | undefined {
  if (!(s._def.catchall instanceof z.ZodNever)) return undefined;
  const mode = s._def.unknownKeys as 'strict' | 'strip' | 'passthrough';
  const fields: [string, Parser][] = [];
  for (const [k, f] of Object.entries(s.shape as Record<string, ZodTypeAny>)) {
    const p = compile(f);
    if (!p) return undefined;
    fields.push([k, p]);
  }
  const known = new Set(fields.map(([k]) => k));
  return (v) => {
    if (!isObject(v)) return NO;
    const out: Record<string, unknown> = {};
    for (const [k, p] of fields) {
      const x = p(v[k]);
      if (x === NO) return NO;
      // zod keeps a key whose value parsed to undefined only when the input had it.
      if (x !== undefined || k in v) out[k] = x;
    }
    if (mode !== 'strip') {
      // for…in without an array of keys per call; an inherited key is not the input's own (zod's Object.keys).
      for (const k in v) {
        if (known.has(k) || !Object.hasOwn(v, k)) continue;
        if (mode === 'strict' || k === '__proto__') return NO;
        out[k] = v[k];
      }
    }
    return out;
  };
}
