// Command-line flags derived from a tool's zod input schema, so `overseer spawn`, `overseer workflow
// start` and `overseer debate start` take every option their tool takes and a field added to the
// schema gets its flag without anyone remembering to add it (test/unit/cli-schema-flags.test.ts).
// One flag per field, named as the field in kebab-case (budget_usd → --budget-usd):
//   text → --x <text>; number → --x <n>; enum → --x <a|b>; boolean → --x and --no-x;
//   list of text → --x <a,b> (comma-separated or repeated; `splitOff` fields only repeated, their
//   items may hold commas, e.g. a check "command:…"); anything structured → --x <json>.
// A bad value is a UsageError (exit 2) naming the flag and what it takes, before the hub is called;
// the whole set is then checked against the schema itself, so nothing reaches the hub that it
// would refuse for a reason the flags could have said.
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { UsageError } from './errors.js';

type Kind = { kind: 'text' } | { kind: 'number' } | { kind: 'boolean' } | { kind: 'enum'; values: string[] } | { kind: 'list' } | { kind: 'json' };

export interface SchemaFlag { field: string; flag: string; attribute: string; kind: Kind; required: boolean; description: string }

export const kebab = (field: string): string => field.replace(/_/g, '-');
const camel = (field: string): string => field.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The object schema under refinements (a `.refine` on the whole object wraps it in ZodEffects). */
export function objectShape(schema: z.ZodTypeAny): Record<string, z.ZodTypeAny> {
  let s: z.ZodTypeAny = schema;
  while (s instanceof z.ZodEffects) s = s.innerType();
  if (!(s instanceof z.ZodObject)) throw new Error('schemaFlags: not an object schema');
  return s.shape as Record<string, z.ZodTypeAny>;
}

function unwrap(t: z.ZodTypeAny): { inner: z.ZodTypeAny; required: boolean } {
  let required = true;
  let s = t;
  for (;;) {
    if (s instanceof z.ZodOptional) { required = false; s = s.unwrap(); } else if (s instanceof z.ZodDefault) { required = false; s = s.removeDefault(); } else if (s instanceof z.ZodEffects) s = s.innerType();
    else return { inner: s, required };
  }
}

function kindOf(t: z.ZodTypeAny): Kind {
  if (t instanceof z.ZodString) return { kind: 'text' };
  if (t instanceof z.ZodNumber) return { kind: 'number' };
  if (t instanceof z.ZodBoolean) return { kind: 'boolean' };
  if (t instanceof z.ZodEnum) return { kind: 'enum', values: [...(t.options as string[])] };
  if (t instanceof z.ZodArray && unwrap(t.element).inner instanceof z.ZodString) return { kind: 'list' };
  return { kind: 'json' };
}

/** The flags of every field of `schema` (in the schema's order). */
export function schemaFlags(schema: z.ZodTypeAny): SchemaFlag[] {
  return Object.entries(objectShape(schema)).map(([field, t]) => {
    const { inner, required } = unwrap(t);
    const description = (t.description ?? inner.description ?? '').split(/(?<=\.)\s(?=[A-Z])/)[0] ?? '';
    return { field, flag: `--${kebab(field)}`, attribute: camel(field), kind: kindOf(inner), required, description };
  });
}

function placeholder(k: Kind): string {
  switch (k.kind) {
    case 'number': return '<n>';
    case 'enum': return `<${k.values.join('|')}>`;
    case 'list': return '<a,b>';
    case 'json': return '<json>';
    default: return '<text>';
  }
}

/** Adds a flag per schema field to `cmd`; `splitOff`: list fields whose items are not split on commas. */
export function addSchemaFlags(cmd: Command, schema: z.ZodTypeAny, o: { splitOff?: string[] } = {}): SchemaFlag[] {
  const flags = schemaFlags(schema);
  for (const f of flags) {
    if (f.kind.kind === 'boolean') {
      cmd.option(f.flag, f.description);
      cmd.addOption(new Option(`--no-${kebab(f.field)}`, `the same as ${f.field}: false`));
      continue;
    }
    const opt = new Option(`${f.flag} ${placeholder(f.kind)}`, f.kind.kind === 'list' ? `${f.description} (${o.splitOff?.includes(f.field) ? 'repeat the flag for more' : 'comma-separated or repeated'})` : f.description);
    if (f.kind.kind === 'list') {
      const split = !o.splitOff?.includes(f.field);
      opt.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), ...(split ? v.split(',').map((s) => s.trim()).filter((s) => s.length > 0) : [v])]);
    }
    if (f.required) opt.makeOptionMandatory();
    cmd.addOption(opt);
  }
  return flags;
}

/** The tool's arguments from the parsed options: each value converted, then the whole checked by the schema. */
export function schemaArgs(schema: z.ZodTypeAny, flags: SchemaFlag[], opts: Record<string, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const f of flags) {
    const v = opts[f.attribute];
    if (v === undefined) continue;
    args[f.field] = convert(f, v);
  }
  const r = schema.safeParse(args);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = String(issue.path[0] ?? '');
    const flag = flags.find((f) => f.field === field);
    const at = issue.path.length > 1 ? ` (at ${issue.path.slice(1).join('.')})` : '';
    throw new UsageError(flag ? `${flag.flag}${at}: ${issue.message}` : issue.message);
  }
  return args;
}

function convert(f: SchemaFlag, v: unknown): unknown {
  const shown = JSON.stringify(v);
  switch (f.kind.kind) {
    case 'number': {
      const n = Number(v);
      if (typeof v !== 'string' || v.trim() === '' || !Number.isFinite(n)) throw new UsageError(`${f.flag} ${shown} is not a number: ${f.flag} takes a number (${f.description})`);
      return n;
    }
    case 'enum':
      if (!f.kind.values.includes(String(v))) throw new UsageError(`${f.flag} ${shown} is not one of ${f.kind.values.join(', ')}`);
      return v;
    case 'json':
      try {
        return JSON.parse(String(v));
      } catch (err) {
        throw new UsageError(`${f.flag} ${shown} is not JSON (${(err as Error).message}): ${f.flag} takes a JSON value (${f.description})`);
      }
    default:
      return v;
  }
}
