// `overseer kb list|search|add|rm`: the knowledge base from the shell. Opens the KB files
// directly (the project's <state>/kb.db and the global $XDG_DATA_HOME/overseer/kb.db), so it
// works whether or not a hub runs; `add` goes through the same triage as report_learnings
// (without the triage agent: the scope is --scope, else project). With a PostgreSQL database
// configured (databaseUrl / OVERSEER_DATABASE_URL) it reads and writes that database's
// kb_entries under the project's root, as the hub does.
import { loadConfig, projectRoot } from '../config.js';
import { InvalidInputError } from '../errors.js';
import { KnowledgeBase, kbPaths, type KbScope, type KbScopeFilter } from '../kb/service.js';
import { openSql, type SqlDb } from '../store/sql/open.js';
import { sqlTarget } from '../store/sql/url.js';
import { table } from './status.js';

export type KbSub = 'list' | 'search' | 'add' | 'rm';

export interface KbCliOptions {
  scope?: string;
  json?: boolean;
  tag?: string;
  limit?: string;
  title?: string;
  content?: string;
  /** Comma-separated. */
  tags?: string;
}

/** Where output goes and which environment/cwd locate the state (tests pass their own). */
export interface KbCliIo {
  out?: (text: string) => void;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

function scopeFilter(s: string | undefined): KbScopeFilter {
  if (s === undefined) return 'all';
  if (s === 'project' || s === 'global' || s === 'all') return s;
  throw new InvalidInputError(`--scope ${JSON.stringify(s)}: use project, global or all`);
}

function scopeOf(s: string | undefined): KbScope | undefined {
  if (s === undefined) return undefined;
  if (s === 'project' || s === 'global') return s;
  throw new InvalidInputError(`--scope ${JSON.stringify(s)}: use project or global`);
}

function limitOf(s: string | undefined, dflt: number, max: number): number {
  if (s === undefined) return dflt;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new InvalidInputError(`--limit ${JSON.stringify(s)}: use a whole number from 1 to ${max}`);
  return n;
}

const oneLine = (s: string, max: number): string => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

export async function runKb(sub: KbSub, args: readonly string[], opts: KbCliOptions = {}, io: KbCliIo = {}): Promise<void> {
  const out = io.out ?? ((t: string) => void process.stdout.write(t));
  const env = io.env ?? process.env;
  const cwd = io.cwd ?? process.cwd();
  const config = loadConfig(env, cwd);
  // A reader never migrates (src/store/sql/readOnly.ts): a database without the schema says to start a hub once.
  const pg: SqlDb | undefined = sqlTarget(config).dialect === 'postgres' ? await openSql(config, { migrate: false }) : undefined;
  const kb = new KnowledgeBase({
    source: pg ? { dialect: 'postgres', db: pg.db, projectKey: projectRoot(cwd) } : { dialect: 'sqlite', ...kbPaths(config.home, env) },
    projectDir: cwd,
  });
  try {
    switch (sub) {
      case 'list': {
        const r = await kb.list({ scope: scopeFilter(opts.scope), tag: opts.tag, limit: limitOf(opts.limit, 100, 10_000) });
        if (opts.json) return out(`${JSON.stringify(r, null, 2)}\n`);
        if (r.entries.length === 0) return out('The knowledge base is empty.\n');
        const rows = r.entries.map((e) => [e.entry_id, e.scope, String(e.merged_count), e.updated_at.slice(0, 10), e.source_job ?? '-', oneLine(e.tags.join(','), 30), oneLine(e.title, 70)]);
        out(`${table([['ID', 'SCOPE', 'MERGED', 'UPDATED', 'SOURCE', 'TAGS', 'TITLE'], ...rows])}\n`);
        if (r.next_cursor) out(`(more entries: use --limit to see more)\n`);
        return;
      }
      case 'search': {
        const query = args.join(' ');
        const hits = await kb.search(query, scopeFilter(opts.scope), limitOf(opts.limit, 10, 50));
        if (opts.json) return out(`${JSON.stringify(hits, null, 2)}\n`);
        if (hits.length === 0) return out(`No entries match ${JSON.stringify(query)}.\n`);
        const rows = hits.map((h) => [h.entry_id, h.score.toFixed(2), oneLine(h.title, 50), oneLine(h.snippet, 90)]);
        out(`${table([['ID', 'SCORE', 'TITLE', 'SNIPPET'], ...rows])}\n`);
        return;
      }
      case 'add': {
        if (!opts.title || !opts.content) throw new InvalidInputError('kb add needs --title "<headline>" and --content "<what you learned>"');
        const tags = opts.tags ? opts.tags.split(',').map((t) => t.trim()).filter(Boolean) : undefined;
        const [r] = await kb.report([{ title: opts.title, content: opts.content, tags, scope: scopeOf(opts.scope) }], { jobId: null });
        if (opts.json) out(`${JSON.stringify(r, null, 2)}\n`);
        if (r!.status === 'rejected') throw new InvalidInputError(`rejected: ${r!.reason}`);
        if (opts.json) return;
        if (r!.status === 'stored') return out(`stored ${r!.entry_id} (${r!.scope}): ${r!.title}\n`);
        return out(`merged into ${r!.into} (${r!.why}${r!.new_information ? ', new information appended' : ', nothing new'}): ${r!.title}\n`);
      }
      case 'rm': {
        const id = args[0];
        if (!id) throw new InvalidInputError('kb rm needs an entry id, e.g. overseer kb rm p-12');
        const r = await kb.delete(id);
        if (opts.json) return out(`${JSON.stringify(r, null, 2)}\n`);
        return out(`deleted ${r.deleted}: ${r.title}\n`);
      }
      default:
        throw new InvalidInputError(`unknown kb subcommand ${JSON.stringify(sub)}: use list, search, add or rm`);
    }
  } finally {
    await kb.close();
    await pg?.close();
  }
}
