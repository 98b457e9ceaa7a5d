// Search everything the agents said (issue 11): the capability's one public module. The hub
// creates it over its state database, hands `indexer` to the supervisor's transcript writes
// (HubContext.transcripts), serves `service` as search_output and GET /api/search, starts the
// background catch-up on start and closes it before the database. The CLI searches the same
// index read-only with TranscriptSearch. Both go through the layer (src/search/sqlIndex.ts):
// FTS5 on SQLite, a tsvector on PostgreSQL.
import type { SqlDb } from '../store/sql/open.js';
import type { Logger } from '../log.js';
import { transcriptIndex } from './sqlIndex.js';
import { TranscriptIndexer } from './indexer.js';
import { TranscriptSearch } from './service.js';
import { searchApi } from './http.js';
import type { ApiHandler } from '../http/api.js';

export { TranscriptIndexer, type ReindexReport } from './indexer.js';
export { TranscriptSearch, DEFAULT_LIMIT, MAX_LIMIT, type SearchHit, type SearchOptions, type SearchResult } from './service.js';
export { hasIndex } from './store.js';
export { transcriptIndex } from './sqlIndex.js';
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

export function createSearch(o: { sql: SqlDb; now: () => number; log: Logger; flushMs?: number }): Search {
  const index = transcriptIndex(o.sql.dialect);
  const indexer = new TranscriptIndexer(o.sql.db, index, { now: o.now, log: o.log, flushMs: o.flushMs });
  const service = new TranscriptSearch(o.sql.db, index, { now: o.now, catchingUp: () => indexer.catchingUp });
  return {
    indexer,
    service,
    api: searchApi(service),
    start: () => { void indexer.reindex().catch((err: unknown) => o.log.warn({ err }, 'transcript index: catching up failed')); },
    close: () => indexer.close(),
  };
}
