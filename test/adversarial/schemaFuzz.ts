// Invalid inputs generated from a tool's published JSON schema (tools/list inputSchema): for
// each property wrong types, null, arrays for objects, out-of-range numbers, strings one past
// their bounds, pattern and enum misses, deep nesting, bad items and nested keys; each missing
// required property; extra keys (including would-be identity keys). Every case names the
// top-level field its error must mention. Pure: no I/O.

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  additionalProperties?: boolean | JsonSchema;
}

export interface FuzzCase { field: string; what: string; args: Record<string, unknown> }

const PATTERN_GUESSES = ['p-1', 'x', 'a', '1', 'main'];

function types(s: JsonSchema): string[] {
  return s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
}

/** A value the schema accepts (the base every mutation starts from). */
export function validValue(s: JsonSchema): unknown {
  if (s.enum) return s.enum[0];
  const t = types(s)[0];
  switch (t) {
    case 'string': {
      if (s.pattern) return PATTERN_GUESSES.find((g) => new RegExp(s.pattern!, 'u').test(g)) ?? 'x';
      return 'x'.repeat(Math.max(1, s.minLength ?? 1));
    }
    case 'integer':
    case 'number': {
      let n = typeof s.minimum === 'number' ? s.minimum : 1;
      if (typeof s.exclusiveMinimum === 'number') n = s.exclusiveMinimum + 1;
      return typeof s.maximum === 'number' ? Math.min(n, s.maximum) : n;
    }
    case 'boolean': return false;
    case 'array': return Array.from({ length: s.minItems ?? 0 }, () => validValue(s.items ?? {}));
    case 'object': return validObject(s);
    default: return 'x';
  }
}

export function validObject(s: JsonSchema): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const k of s.required ?? []) o[k] = validValue(s.properties?.[k] ?? {});
  return o;
}

function deep(levels: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { d: v };
  return v;
}

function accepts(s: JsonSchema, v: unknown): boolean {
  const ts = types(s);
  if (ts.length === 0) return true;
  return ts.some((t) => {
    if (t === 'null') return v === null;
    if (t === 'array') return Array.isArray(v);
    if (t === 'object') return typeof v === 'object' && v !== null && !Array.isArray(v);
    if (t === 'integer') return Number.isInteger(v);
    return typeof v === t;
  });
}

/** Values of `s`'s property that the schema refuses, with a label. */
export function invalidValues(s: JsonSchema): [string, unknown][] {
  const out: [string, unknown][] = [];
  const wrong: [string, unknown][] = [['null', null], ['number', 12345], ['boolean', true], ['string', 'a string'], ['empty array', []], ['object', { a: 1 }], ['array of objects', [{ a: 1 }]]];
  if (types(s).length > 0) for (const [l, v] of wrong) if (!accepts(s, v) && !(s.enum && s.enum.includes(v))) out.push([`wrong type: ${l}`, v]);
  if (types(s).length > 0 && !types(s).includes('object')) out.push(['deep nesting (80 levels)', deep(80)]);
  if (s.enum) out.push(['value outside the enum', 'not-a-valid-choice\u202e']);
  const t = types(s)[0];
  if (t === 'string' && !s.enum) {
    if (s.maxLength !== undefined) out.push([`string of ${s.maxLength + 1} characters (max ${s.maxLength})`, 'y'.repeat(s.maxLength + 1)]);
    if ((s.minLength ?? 0) >= 1) out.push(['empty string', '']);
    if (s.pattern) out.push(['string not matching the pattern', '../../etc/passwd\u0000']);
  }
  if (t === 'integer' || t === 'number') {
    if (typeof s.minimum === 'number') out.push([`below the minimum ${s.minimum}`, s.minimum - 1]);
    if (typeof s.maximum === 'number') out.push([`above the maximum ${s.maximum}`, s.maximum + 1], ['1e308', 1e308]);
    if (typeof s.minimum === 'number' || typeof s.maximum === 'number') out.push(['-1e308', typeof s.minimum === 'number' ? -1e308 : 1e308]);
    if (t === 'integer') out.push(['a fraction for an integer', 1.5]);
  }
  if (t === 'array') {
    const item = validValue(s.items ?? {});
    if (s.maxItems !== undefined) out.push([`${s.maxItems + 1} items (max ${s.maxItems})`, Array.from({ length: s.maxItems + 1 }, () => item)]);
    if ((s.minItems ?? 0) >= 1) out.push(['no items', []]);
    if (s.items) for (const [l, v] of invalidValues(s.items).slice(0, 4)) out.push([`an item with ${l}`, [v]]);
  }
  if (t === 'object') {
    if (s.additionalProperties === false) out.push(['an unknown nested key', { ...validObject(s), zz_unknown: 1 }]);
    for (const k of s.required ?? []) {
      const o = validObject(s);
      delete o[k];
      out.push([`nested required "${k}" missing`, o]);
    }
  }
  return out;
}

const EXTRA_KEYS = ['role', 'caller', 'token', 'job_id_override', 'constructor', 'zz_extra', '__overseer_admin', 'jobId', 'holder', 'author', 'sudo', 'zz_more'];

/** At least `min` invalid argument objects for a tool whose input schema is `s`. */
export function fuzzCases(s: JsonSchema, min = 20): FuzzCase[] {
  const base = validObject(s);
  const cases: FuzzCase[] = [];
  for (const [field, ps] of Object.entries(s.properties ?? {})) {
    for (const [what, v] of invalidValues(ps)) cases.push({ field, what, args: { ...base, [field]: v } });
  }
  for (const field of s.required ?? []) {
    const args = { ...base };
    delete args[field];
    cases.push({ field, what: 'required field missing', args });
  }
  if (s.additionalProperties === false) {
    const extras = EXTRA_KEYS.filter((k) => !(k in (s.properties ?? {})));
    for (let i = 0; cases.length < min || i < 3; i++) {
      const k = extras[i] ?? `zz_extra_${i}`;
      cases.push({ field: k, what: 'unknown key', args: { ...base, [k]: i % 2 ? 'lead' : { role: 'lead' } } });
    }
  }
  return cases;
}
