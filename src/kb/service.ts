// The knowledge base over two stores: the project's (<state>/kb.db) and the person's global
// one ($XDG_DATA_HOME/overseer/kb.db, shared by every project). Entry ids carry their store:
// `p-12` (project) and `g-3` (global). Reporting runs the triage pipeline per learning:
// shape checks → secret check → duplicate (same normalised title, or an FTS hit whose word
// overlap is ≥ DUPLICATE_JACCARD) → merge, else scope (hint, else triage agent, else project)
// → store. The global file is opened on first use, so a hub that never touches it never
// creates it.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { InvalidInputError, InvalidStateError, NotFoundError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { KbStore, type KbEntry, type KbSearchHit } from './store.js';
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

export interface KnowledgeBaseOptions {
  projectDb: string;
  globalDb: string;
  /** The project the hub serves: recorded as provenance of global entries. */
  projectDir?: string;
  triageAgent?: TriageAgent;
  now?: () => number;
  log?: Logger;
}

export class KnowledgeBase {
  private readonly stores = new Map<KbScope, KbStore>();

  constructor(private readonly o: KnowledgeBaseOptions) {}

  /** The store of a scope, opened (and created) on first use. */
  store(scope: KbScope): KbStore {
    let s = this.stores.get(scope);
    if (!s) {
      const file = scope === 'project' ? this.o.projectDb : this.o.globalDb;
      try {
        s = KbStore.open(file, scope, this.o.now);
      } catch (err) {
        const hint = scope === 'global' ? ' Set XDG_DATA_HOME to a writable directory, or use scope "project".' : '';
        throw new InvalidStateError(`cannot open the ${scope} knowledge base ${file}: ${errorMessage(err)}.${hint}`);
      }
      this.stores.set(scope, s);
    }
    return s;
  }

  /** Entries matching user text, best bm25 score first, across the chosen scopes. */
  search(query: string, scope: KbScopeFilter = 'all', limit = 10): KbHit[] {
    return this.collect(scope, limit, (s, n) => s.search(query, n)).map(({ entry: _e, ...hit }) => hit);
  }

  /** Entries matching any of `terms` (already extracted), best first, whole entries included. */
  searchTerms(terms: readonly string[], scope: KbScopeFilter = 'all', limit = 10): KbFullHit[] {
    return this.collect(scope, limit, (s, n) => s.searchTerms(terms, n));
  }

  private collect(scope: KbScopeFilter, limit: number, run: (s: KbStore, n: number) => KbSearchHit[]): KbFullHit[] {
    const scopes = scope === 'all' ? SCOPES : [scope];
    const hits = scopes.flatMap((sc) => run(this.store(sc), limit).map((h) => toHit(sc, h)));
    // bm25 scores of two files are on comparable scales (same weights, same tokenizer); ties: project first.
    return hits.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  get(id: string): (KbEntry & { entry_id: string }) | undefined {
    const p = parseEntryId(id);
    if (!p) return undefined;
    const e = this.store(p.scope).get(p.id);
    return e ? { ...e, entry_id: entryId(p.scope, e.id) } : undefined;
  }

  /** Newest first: project entries, then global ones; `cursor` is the last entry_id of the previous page. */
  list(f: { scope?: KbScopeFilter; tag?: string; limit?: number; cursor?: string } = {}): { entries: KbListItem[]; next_cursor?: string } {
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
      const rows = this.store(sc).list({ tag: f.tag, limit: need, beforeId: cur?.scope === sc ? cur.id : undefined });
      out.push(...rows.map((e) => listItem(sc, e)));
    }
    if (out.length <= limit) return { entries: out };
    const page = out.slice(0, limit);
    return { entries: page, next_cursor: page.at(-1)!.entry_id };
  }

  /** Delete an entry; an unknown id is a NotFoundError listing ids that do exist nearby. */
  delete(id: string): { deleted: string; title: string } {
    const { p, store } = this.existing(id);
    const e = store.get(p.id)!;
    if (!store.delete(p.id)) throw this.notFound(id, p, store);
    return { deleted: entryId(p.scope, p.id), title: e.title };
  }

  /**
   * Change an entry's title, content or tags by hand (the dashboard): the result must pass the
   * same shape and secret checks as a reported learning; provenance and merge count are kept.
   */
  edit(id: string, patch: { title?: string; content?: string; tags?: readonly string[] }): KbEntry & { entry_id: string } {
    const { p, store } = this.existing(id);
    const cur = store.get(p.id)!;
    const c = cleanLearning({ title: patch.title ?? cur.title, content: patch.content ?? cur.content, tags: patch.tags ?? cur.tags });
    if (!c.ok) throw new InvalidInputError(c.reason);
    const secret = secretReason(c.learning);
    if (secret) throw new InvalidInputError(secret);
    const e = store.modify(p.id, () => ({ title: c.learning.title, content: c.learning.content, tags: c.learning.tags }));
    if (!e) throw this.notFound(id, p, store);
    return { ...e, entry_id: entryId(p.scope, e.id) };
  }

  /** The store of an entry id that names an entry, or the error saying what to pass. */
  private existing(id: string): { p: { scope: KbScope; id: number }; store: KbStore } {
    const p = parseEntryId(id);
    if (!p) throw new InvalidInputError(`entry_id ${JSON.stringify(id)} is not an entry id: use "p-<n>" (project) or "g-<n>" (global) from search_kb or list_kb`);
    const store = this.store(p.scope);
    if (!store.get(p.id)) throw this.notFound(id, p, store);
    return { p, store };
  }

  private notFound(id: string, p: { scope: KbScope; id: number }, store: KbStore): NotFoundError {
    const near = store.nearbyIds(p.id).map((n) => entryId(p.scope, n));
    return new NotFoundError(`no ${p.scope} knowledge base entry ${id}. ${near.length ? `Nearby: ${near.join(', ')}` : `The ${p.scope} knowledge base is empty`} (list_kb shows them all).`);
  }

  /** Triage and keep each learning; one result per learning, in order. Never throws for one bad learning. */
  async report(learnings: readonly LearningInput[], o: { jobId?: string | null; projectDir?: string } = {}): Promise<LearningResult[]> {
    const results: LearningResult[] = [];
    for (const l of learnings) results.push(await this.reportOne(l, o.jobId ?? null, o.projectDir ?? this.o.projectDir ?? null));
    return results;
  }

  private async reportOne(raw: LearningInput, jobId: string | null, projectDir: string | null): Promise<LearningResult> {
    const title = (raw.title ?? '').trim().slice(0, 200);
    const c = cleanLearning(raw);
    if (!c.ok) return { status: 'rejected', reason: c.reason, title };
    const l = c.learning;
    const secret = secretReason(l);
    if (secret) return { status: 'rejected', reason: secret, title };

    const candidates = l.scope ? [l.scope] : SCOPES;
    const dup = this.findDuplicate(l, candidates);
    if (dup) return this.merge(dup.scope, dup.entry, l, jobId, dup.why);

    let scope: TriageVerdict = l.scope ?? 'project';
    if (!l.scope && this.o.triageAgent) {
      let verdict: TriageVerdict | undefined;
      try {
        verdict = await this.o.triageAgent(l, jobId);
      } catch (err) {
        this.o.log?.warn({ err }, 'kb triage agent failed; storing in the project scope');
      }
      if (verdict === 'discard') return { status: 'rejected', reason: 'triage: not worth keeping', title: l.title };
      scope = verdict ?? 'project';
      // The agent took time: another report may have stored the same learning meanwhile.
      const again = this.findDuplicate(l, SCOPES);
      if (again) return this.merge(again.scope, again.entry, l, jobId, again.why);
    }
    const e = this.store(scope).insert({
      title: l.title, content: l.content, tags: l.tags, source_job: jobId,
      project: scope === 'global' ? projectDir : null,
    });
    return { status: 'stored', entry_id: entryId(scope, e.id), scope, title: e.title };
  }

  /** An existing entry saying the same thing: same normalised title, or FTS hit with high word overlap. */
  findDuplicate(l: CleanLearning, scopes: readonly KbScope[]): { scope: KbScope; entry: KbEntry; why: string } | undefined {
    for (const sc of scopes) {
      const same = this.store(sc).byNormTitle(l.normTitle);
      if (same) return { scope: sc, entry: same, why: `same title as ${entryId(sc, same.id)}` };
    }
    const words = wordSet(`${l.title} ${l.content}`);
    const terms = distinctiveTerms(`${l.title} ${l.content}`, 12);
    let best: { scope: KbScope; entry: KbEntry; j: number } | undefined;
    for (const sc of scopes) {
      for (const h of this.store(sc).searchTerms(terms, DUPLICATE_CANDIDATES)) {
        const j = jaccard(words, wordSet(`${h.entry.title} ${h.entry.content}`));
        if (j >= DUPLICATE_JACCARD && (!best || j > best.j)) best = { scope: sc, entry: h.entry, j };
      }
    }
    return best && { scope: best.scope, entry: best.entry, why: `${Math.round(best.j * 100)}% word overlap with ${entryId(best.scope, best.entry.id)}` };
  }

  private merge(scope: KbScope, into: KbEntry, l: CleanLearning, jobId: string | null, why: string): LearningResult {
    let added = false;
    const updated = this.store(scope).modify(into.id, (cur) => {
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

  close(): void {
    for (const s of this.stores.values()) s.close();
    this.stores.clear();
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
