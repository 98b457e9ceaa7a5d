// The knowledge base over two stores: the project's (<state>/kb.db) and the person's global
// one ($XDG_DATA_HOME/overseer/kb.db, shared by every project). Entry ids carry their store:
// `p-12` (project) and `g-3` (global). Reporting runs the triage pipeline per learning:
// shape checks → secret check → duplicate (same normalised title, or an FTS hit whose word
// overlap is ≥ DUPLICATE_JACCARD) → merge, else scope (hint, else triage agent, else project)
// → store. The global file is opened on first use, so a hub that never touches it never
// creates it.
// Every store call goes through the layer (src/kb/sqlEntries.ts, `KbEntries`): on SQLite each
// scope keeps its file (`openKbFile`); on PostgreSQL both scopes are rows of the crew's
// `kb_entries`, the project's under its key (its root directory, real path). Reports run one at
// a time per knowledge base (the duplicate check and the store it decides, as the synchronous
// store did in one turn), and on PostgreSQL under a transaction-scoped advisory lock, so two
// hubs reporting the same learning at once merge it rather than store it twice.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { InvalidInputError, InvalidStateError, NotFoundError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { Schema } from '../store/sql/schema.js';
import { openDb } from '../store/db.js';
import { KB_MIGRATIONS, type KbEntry, type KbSearchHit } from './store.js';
import { kbEntries, kbFileOver, type KbEntries } from './sqlEntries.js';
import { distinctiveTerms, jaccard, wordSet } from './text.js';
import { cleanLearning, mergeContent, secretReason, unionTags, type CleanLearning, type KbScope, type LearningInput } from './triage.js';

export type { KbScope, LearningInput, CleanLearning };
export type KbScopeFilter = KbScope | 'all';
export type TriageVerdict = KbScope | 'discard';
/** Decides where a learning without a scope hint belongs; undefined = could not decide (→ project). */
/** `jobId`: the job whose report is triaged (its usage is recorded against it), null for the lead. */
export type TriageAgent = (l: CleanLearning, jobId?: string | null) => Promise<TriageVerdict | undefined>;

/** Word-set overlap from which an FTS hit counts as the same learning. */
export const DUPLICATE_JACCARD = 0.6;
/** FTS candidates checked for overlap per learning. */
const DUPLICATE_CANDIDATES = 5;
const SCOPES: readonly KbScope[] = ['project', 'global'];

/** `$XDG_DATA_HOME/overseer/kb.db`, else `~/.local/share/overseer/kb.db`. */
export function globalKbPath(env: NodeJS.ProcessEnv = process.env): string {
  const data = env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share');
  return join(data, 'overseer', 'kb.db');
}

/** The two KB files of a state directory. */
export function kbPaths(stateDir: string, env: NodeJS.ProcessEnv = process.env): { projectDb: string; globalDb: string } {
  return { projectDb: join(stateDir, 'kb.db'), globalDb: globalKbPath(env) };
}

export function entryId(scope: KbScope, id: number): string {
  return `${scope === 'project' ? 'p' : 'g'}-${id}`;
}

export function parseEntryId(s: string): { scope: KbScope; id: number } | undefined {
  const m = /^([pg])-([1-9]\d{0,15})$/.exec(s.trim());
  return m ? { scope: m[1] === 'p' ? 'project' : 'global', id: Number(m[2]) } : undefined;
}

/** A search hit as tools show it. */
export interface KbHit {
  entry_id: string;
  title: string;
  snippet: string;
  tags: string[];
  scope: KbScope;
  source_job: string | null;
  score: number;
}

/** A hit with the whole entry (memory rendering needs the content). */
export interface KbFullHit extends KbHit {
  entry: KbEntry;
}

export interface KbListItem {
  entry_id: string;
  title: string;
  tags: string[];
  scope: KbScope;
  source_job: string | null;
  merged_count: number;
  updated_at: string;
  /** The first 200 characters of the content. */
  preview: string;
}

export type LearningResult =
  | { status: 'stored'; entry_id: string; scope: KbScope; title: string }
  | { status: 'merged'; entry_id: string; into: string; title: string; new_information: boolean; why: string }
  | { status: 'rejected'; reason: string; title: string };

/** Where the entries live. */
export type KbSource =
  /** A file of its own per scope: the project's (under its state directory) and the global one. */
  | { dialect: 'sqlite'; projectDb: string; globalDb: string }
  /** The crew's database (kb_entries); `projectKey`: the project's root directory, real path. */
  | { dialect: 'postgres'; db: Kysely<Schema>; projectKey: string };

/** One scope's entries and the queryable they are read through. */
interface Scoped {
  db: Kysely<Schema>;
  entries: KbEntries;
}

/** Advisory lock key of knowledge-base reports on PostgreSQL (class 8; store-plan §2). */
const REPORT_LOCK = 8;

export interface KnowledgeBaseOptions {
  source: KbSource;
  /** The project the hub serves: recorded as provenance of global entries. */
  projectDir?: string;
  triageAgent?: TriageAgent;
  now?: () => number;
  log?: Logger;
}

export class KnowledgeBase {
  private readonly stores = new Map<KbScope, Scoped>();
  /** Reports, one after another (the duplicate check and the store it decides). */
  private reporting: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: KnowledgeBaseOptions) {}

  /** The entries of a scope, opened (a SQLite file created) on first use. */
  private store(scope: KbScope): Scoped {
    let s = this.stores.get(scope);
    if (!s) {
      const src = this.o.source;
      if (src.dialect === 'postgres') {
        s = { db: src.db, entries: kbEntries({ dialect: 'postgres', scope, project: src.projectKey }, this.o.now) };
      } else {
        const file = scope === 'project' ? src.projectDb : src.globalDb;
        try {
          const raw = openDb(file, KB_MIGRATIONS);
          s = { db: kbFileOver(raw), entries: kbEntries({ dialect: 'sqlite', scope }, this.o.now) };
        } catch (err) {
          const hint = scope === 'global' ? ' Set XDG_DATA_HOME to a writable directory, or use scope "project".' : '';
          throw new InvalidStateError(`cannot open the ${scope} knowledge base ${file}: ${errorMessage(err)}.${hint}`);
        }
      }
      this.stores.set(scope, s);
    }
    return s;
  }

  /** Entries matching user text, best score first, across the chosen scopes. */
  async search(query: string, scope: KbScopeFilter = 'all', limit = 10): Promise<KbHit[]> {
    return (await this.collect(scope, limit, (s, n) => s.entries.search(s.db, query, n))).map(({ entry: _e, ...hit }) => hit);
  }

  /** Entries matching any of `terms` (already extracted), best first, whole entries included. */
  searchTerms(terms: readonly string[], scope: KbScopeFilter = 'all', limit = 10): Promise<KbFullHit[]> {
    return this.collect(scope, limit, (s, n) => s.entries.searchTerms(s.db, terms, n));
  }

  private async collect(scope: KbScopeFilter, limit: number, run: (s: Scoped, n: number) => Promise<KbSearchHit[]>): Promise<KbFullHit[]> {
    const scopes = scope === 'all' ? SCOPES : [scope];
    const hits: KbFullHit[] = [];
    for (const sc of scopes) hits.push(...(await run(this.store(sc), limit)).map((h) => toHit(sc, h)));
    // Scores of the two scopes are on one scale (same weights and words; on PostgreSQL one table); ties: project first.
    return hits.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  async get(id: string): Promise<(KbEntry & { entry_id: string }) | undefined> {
    const p = parseEntryId(id);
    if (!p) return undefined;
    const s = this.store(p.scope);
    const e = await s.entries.get(s.db, p.id);
    return e ? { ...e, entry_id: entryId(p.scope, e.id) } : undefined;
  }

  /** Newest first: project entries, then global ones; `cursor` is the last entry_id of the previous page. */
  async list(f: { scope?: KbScopeFilter; tag?: string; limit?: number; cursor?: string } = {}): Promise<{ entries: KbListItem[]; next_cursor?: string }> {
    const order = f.scope === undefined || f.scope === 'all' ? SCOPES : [f.scope];
    const limit = f.limit ?? 50;
    const cur = f.cursor === undefined ? undefined : parseEntryId(f.cursor);
    if (f.cursor !== undefined && (!cur || !order.includes(cur.scope))) {
      throw new InvalidInputError(`cursor ${JSON.stringify(f.cursor)} is not an entry id of this listing: pass the next_cursor of the previous page unchanged`);
    }
    const out: KbListItem[] = [];
    for (const sc of order) {
      if (cur && order.indexOf(sc) < order.indexOf(cur.scope)) continue;
      const need = limit + 1 - out.length;
      if (need <= 0) break;
      const s = this.store(sc);
      const rows = await s.entries.list(s.db, { tag: f.tag, limit: need, beforeId: cur?.scope === sc ? cur.id : undefined });
      out.push(...rows.map((e) => listItem(sc, e)));
    }
    if (out.length <= limit) return { entries: out };
    const page = out.slice(0, limit);
    return { entries: page, next_cursor: page.at(-1)!.entry_id };
  }

  /** Delete an entry; an unknown id is a NotFoundError listing ids that do exist nearby. */
  async delete(id: string): Promise<{ deleted: string; title: string }> {
    const { p, store, entry } = await this.existing(id);
    if (!await store.entries.delete(store.db, p.id)) throw await this.notFound(id, p, store);
    return { deleted: entryId(p.scope, p.id), title: entry.title };
  }

  /**
   * Change an entry's title, content or tags by hand (the dashboard): the result must pass the
   * same shape and secret checks as a reported learning; provenance and merge count are kept.
   */
  async edit(id: string, patch: { title?: string; content?: string; tags?: readonly string[] }): Promise<KbEntry & { entry_id: string }> {
    const { p, store, entry: cur } = await this.existing(id);
    const c = cleanLearning({ title: patch.title ?? cur.title, content: patch.content ?? cur.content, tags: patch.tags ?? cur.tags });
    if (!c.ok) throw new InvalidInputError(c.reason);
    const secret = secretReason(c.learning);
    if (secret) throw new InvalidInputError(secret);
    const e = await store.entries.modify(store.db, p.id, () => ({ title: c.learning.title, content: c.learning.content, tags: c.learning.tags }));
    if (!e) throw await this.notFound(id, p, store);
    return { ...e, entry_id: entryId(p.scope, e.id) };
  }

  /** The store of an entry id that names an entry, or the error saying what to pass. */
  private async existing(id: string): Promise<{ p: { scope: KbScope; id: number }; store: Scoped; entry: KbEntry }> {
    const p = parseEntryId(id);
    if (!p) throw new InvalidInputError(`entry_id ${JSON.stringify(id)} is not an entry id: use "p-<n>" (project) or "g-<n>" (global) from search_kb or list_kb`);
    const store = this.store(p.scope);
    const entry = await store.entries.get(store.db, p.id);
    if (!entry) throw await this.notFound(id, p, store);
    return { p, store, entry };
  }

  private async notFound(id: string, p: { scope: KbScope; id: number }, store: Scoped): Promise<NotFoundError> {
    const near = (await store.entries.nearbyIds(store.db, p.id)).map((n) => entryId(p.scope, n));
    return new NotFoundError(`no ${p.scope} knowledge base entry ${id}. ${near.length ? `Nearby: ${near.join(', ')}` : `The ${p.scope} knowledge base is empty`} (list_kb shows them all).`);
  }

  /** Triage and keep each learning; one result per learning, in order. Never throws for one bad learning. */
  async report(learnings: readonly LearningInput[], o: { jobId?: string | null; projectDir?: string } = {}): Promise<LearningResult[]> {
    const results: LearningResult[] = [];
    for (const l of learnings) results.push(await this.reportOne(l, o.jobId ?? null, o.projectDir ?? this.o.projectDir ?? null));
    return results;
  }

  /**
   * A duplicate check and the store it decides, after every earlier one of this knowledge base
   * (in this process) and, on PostgreSQL, under an advisory lock that other hubs' reports take too.
   */
  private decide<T>(fn: () => Promise<T>): Promise<T> {
    const src = this.o.source;
    const run = src.dialect === 'postgres'
      ? () => src.db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(${REPORT_LOCK}, hashtext(${src.projectKey}))`.execute(trx);
        return fn();
      })
      : fn;
    const next = this.reporting.then(run, run);
    this.reporting = next.catch(() => undefined);
    return next;
  }

  private async reportOne(raw: LearningInput, jobId: string | null, projectDir: string | null): Promise<LearningResult> {
    const title = (raw.title ?? '').trim().slice(0, 200);
    const c = cleanLearning(raw);
    if (!c.ok) return { status: 'rejected', reason: c.reason, title };
    const l = c.learning;
    const secret = secretReason(l);
    if (secret) return { status: 'rejected', reason: secret, title };

    const candidates = l.scope ? [l.scope] : SCOPES;
    if (l.scope || !this.o.triageAgent) {
      return this.decide(async () => {
        const dup = await this.findDuplicate(l, candidates);
        return dup ? this.merge(dup.scope, dup.entry, l, jobId, dup.why) : this.storeNew(l.scope ?? 'project', l, jobId, projectDir);
      });
    }
    const dup = await this.decide(() => this.findDuplicate(l, candidates));
    if (dup) return this.decide(() => this.merge(dup.scope, dup.entry, l, jobId, dup.why));

    let verdict: TriageVerdict | undefined;
    try {
      verdict = await this.o.triageAgent(l, jobId);
    } catch (err) {
      this.o.log?.warn({ err }, 'kb triage agent failed; storing in the project scope');
    }
    if (verdict === 'discard') return { status: 'rejected', reason: 'triage: not worth keeping', title: l.title };
    const scope = verdict ?? 'project';
    // The agent took time: another report may have stored the same learning meanwhile.
    return this.decide(async () => {
      const again = await this.findDuplicate(l, SCOPES);
      return again ? this.merge(again.scope, again.entry, l, jobId, again.why) : this.storeNew(scope, l, jobId, projectDir);
    });
  }

  private async storeNew(scope: KbScope, l: CleanLearning, jobId: string | null, projectDir: string | null): Promise<LearningResult> {
    const s = this.store(scope);
    const e = await s.entries.insert(s.db, {
      title: l.title, content: l.content, tags: l.tags, source_job: jobId,
      project: scope === 'global' ? projectDir : null,
    });
    return { status: 'stored', entry_id: entryId(scope, e.id), scope, title: e.title };
  }

  /** An existing entry saying the same thing: same normalised title, or FTS hit with high word overlap. */
  async findDuplicate(l: CleanLearning, scopes: readonly KbScope[]): Promise<{ scope: KbScope; entry: KbEntry; why: string } | undefined> {
    for (const sc of scopes) {
      const s = this.store(sc);
      const same = await s.entries.byNormTitle(s.db, l.normTitle);
      if (same) return { scope: sc, entry: same, why: `same title as ${entryId(sc, same.id)}` };
    }
    const words = wordSet(`${l.title} ${l.content}`);
    const terms = distinctiveTerms(`${l.title} ${l.content}`, 12);
    let best: { scope: KbScope; entry: KbEntry; j: number } | undefined;
    for (const sc of scopes) {
      const s = this.store(sc);
      for (const h of await s.entries.searchTerms(s.db, terms, DUPLICATE_CANDIDATES)) {
        const j = jaccard(words, wordSet(`${h.entry.title} ${h.entry.content}`));
        if (j >= DUPLICATE_JACCARD && (!best || j > best.j)) best = { scope: sc, entry: h.entry, j };
      }
    }
    return best && { scope: best.scope, entry: best.entry, why: `${Math.round(best.j * 100)}% word overlap with ${entryId(best.scope, best.entry.id)}` };
  }

  private async merge(scope: KbScope, into: KbEntry, l: CleanLearning, jobId: string | null, why: string): Promise<LearningResult> {
    let added = false;
    const s = this.store(scope);
    const updated = await s.entries.modify(s.db, into.id, (cur) => {
      const m = mergeContent(cur.content, l.content);
      added = m.added;
      return {
        content: m.content,
        tags: unionTags(cur.tags, l.tags),
        merged_count: cur.merged_count + 1,
        sources: jobId && !cur.sources.includes(jobId) ? [...cur.sources, jobId] : cur.sources,
      };
    });
    const id = entryId(scope, into.id);
    return { status: 'merged', entry_id: id, into: id, title: updated?.title ?? into.title, new_information: added, why };
  }

  /** Close the SQLite files (PostgreSQL's connection is the hub's). */
  async close(): Promise<void> {
    const files = this.o.source.dialect === 'sqlite' ? [...this.stores.values()] : [];
    this.stores.clear();
    for (const s of files) await s.db.destroy();
  }
}

function toHit(scope: KbScope, h: KbSearchHit): KbFullHit {
  return {
    entry_id: entryId(scope, h.entry.id),
    title: h.entry.title,
    snippet: h.snippet,
    tags: h.entry.tags,
    scope,
    source_job: h.entry.source_job,
    score: Math.round(h.score * 1000) / 1000,
    entry: h.entry,
  };
}

function listItem(scope: KbScope, e: KbEntry): KbListItem {
  return {
    entry_id: entryId(scope, e.id),
    title: e.title,
    tags: e.tags,
    scope,
    source_job: e.source_job,
    merged_count: e.merged_count,
    updated_at: new Date(e.updated_at).toISOString(),
    preview: e.content.length > 200 ? `${e.content.slice(0, 200)}…` : e.content,
  };
}
