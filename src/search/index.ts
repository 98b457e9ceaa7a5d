// Search everything the agents said (issue 11): the capability's one public module. The hub
// creates it over its state database, hands `indexer` to the supervisor's transcript writes
// (HubContext.transcripts), serves `service` as search_output and GET /api/search, starts the
// background catch-up on start and closes it before the database. The CLI searches the same
// index read-only with TranscriptSearch.
import type { Db } from '../store/db.js';
import type { Logger } from '../log.js';
import { TranscriptIndexer } from './indexer.js';
import { TranscriptSearch } from './service.js';
import { searchApi } from './http.js';
import type { ApiHandler } from '../http/api.js';

export { TranscriptIndexer, type ReindexReport } from './indexer.js';
export { TranscriptSearch, DEFAULT_LIMIT, MAX_LIMIT, type SearchHit, type SearchOptions, type SearchResult } from './service.js';
export { hasIndex } from './store.js';
export { parseSince } from './query.js';

export interface Search {
  indexer: TranscriptIndexer;
  service: TranscriptSearch;
  /** GET /api/search. */
  api: ApiHandler;
  /** Index what is not indexed yet, in the background. */
  start(): void;
  /** Write what is buffered, stop the catch-up. Before the database closes. */
  close(): Promise<void>;
}

export function createSearch(o: { db: Db; now: () => number; log: Logger; flushMs?: number }): Search {
  const indexer = new TranscriptIndexer(o.db, { now: o.now, log: o.log, flushMs: o.flushMs });
  const service = new TranscriptSearch(o.db, { now: o.now, catchingUp: () => indexer.catchingUp });
  return {
    indexer,
    service,
    api: searchApi(service),
    start: () => { void indexer.reindex().catch((err: unknown) => o.log.warn({ err }, 'transcript index: catching up failed')); },
    close: () => indexer.close(),
  };
}
