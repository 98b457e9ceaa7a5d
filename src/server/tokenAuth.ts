// Bearer token → caller, for every HTTP request of the hub (src/server/http.ts HttpAuth).
// The lead token is compared by hash; an agent token is valid exactly while a job row carries
// its hash (runner.ts sets it when an attempt starts and clears it when the job ends, reconcile
// clears it at start). The hash of a token is remembered (a pure function of the token), and so
// is which job a hash belongs to — but only until any job's token_hash is written again
// (`tokenEpoch`, bumped by every token write: src/store/sql/jobs.ts updateJob / claimJob): a token whose job ended stops working at its next
// request, and a busy crew's calls skip the lookup (docs/performance-native-mcp.md).
import type { Db } from '../store/db.js';
import { tokenEpoch } from '../store/jobs.js';
import type { Caller } from '../services/context.js';
import type { HttpAuth } from './http.js';

/** Hashes kept at most (then forgotten at once; a crew's tokens are far fewer). */
const MAX_REMEMBERED = 4096;

export function tokenAuth(db: Db, leadHash: string, hash: (token: string) => string): HttpAuth {
  const hashes = new Map<string, string>();
  // mixed period: until step 6b — a synchronous read (HttpAuth.identify is synchronous); on
  // PostgreSQL this becomes an awaited lookup behind the same epoch cache.
  const byHash = db.prepare('SELECT id FROM jobs WHERE token_hash = ?');
  /** hash → its job's caller, valid while the token epoch is `epoch` (unknown tokens are never kept) */
  const agents = new Map<string, Caller>();
  let epoch = -1;
  return {
    identify(token: string): Caller | undefined {
      const known = hashes.get(token);
      const h = known ?? hash(token);
      let caller: Caller | undefined;
      if (h === leadHash) caller = { role: 'lead' };
      else {
        const now = tokenEpoch();
        if (now !== epoch) {
          agents.clear();
          epoch = now;
        }
        caller = agents.get(h);
        if (!caller) {
          const job = byHash.get(h) as { id: string } | undefined;
          caller = job ? { role: 'agent', jobId: job.id } : undefined;
          if (caller) {
            if (agents.size >= MAX_REMEMBERED) agents.clear();
            agents.set(h, caller);
          }
        }
      }
      if (caller && known === undefined) {
        if (hashes.size >= MAX_REMEMBERED) hashes.clear();
        hashes.set(token, h);
      }
      return caller;
    },
  };
}
