// Bearer token → caller, for every HTTP request of the hub (src/server/http.ts HttpAuth).
// The lead token is compared by hash; an agent token is valid exactly while a job row carries
// its hash (runner.ts sets it when an attempt starts and clears it when the job ends, reconcile
// clears it at start). The hash of a token is remembered (a pure function of the token), and so
// is which job a hash belongs to — but only until any job's token_hash is written again
// (`tokenEpoch`, bumped by every token write: src/store/sql/jobs.ts updateJob / claimJob): a token whose job ended stops working at its next
// request, and a busy crew's calls skip the lookup (docs/performance-native-mcp.md).
// Synchronous when the cache answers (the lead, a known agent at the current epoch: every call of
// a busy crew); a miss reads the layer and answers with a promise (docs/decisions.md, "Token
// lookups: synchronous when cached").
import { tokenEpoch } from '../store/jobs.js';
import { jobIdByTokenHash } from '../store/sql/jobs.js';
import type { Q } from '../store/sql/tx.js';
import type { Caller } from '../services/context.js';
import type { HttpAuth } from './http.js';

/** Hashes kept at most (then forgotten at once; a crew's tokens are far fewer). */
const MAX_REMEMBERED = 4096;

/** `hubId`: only the tokens of the jobs this hub runs are agents' here (docs/store-plan.md §3.3). */
export function tokenAuth(q: Q, leadHash: string, hash: (token: string) => string, hubId: string): HttpAuth {
  const hashes = new Map<string, string>();
  /** hash → its job's caller, valid while the token epoch is `epoch` (unknown tokens are never kept) */
  const agents = new Map<string, Caller>();
  let epoch = -1;
  const remember = (token: string, h: string): void => {
    if (hashes.has(token)) return;
    if (hashes.size >= MAX_REMEMBERED) hashes.clear();
    hashes.set(token, h);
  };
  /** The layer's answer for a hash the cache does not know; kept only if no token was written meanwhile. */
  const lookup = async (token: string, h: string, at: number): Promise<Caller | undefined> => {
    const id = await jobIdByTokenHash(q, h, hubId);
    if (!id) return undefined;
    const caller: Caller = { role: 'agent', jobId: id };
    if (tokenEpoch() === at && epoch === at) {
      if (agents.size >= MAX_REMEMBERED) agents.clear();
      agents.set(h, caller);
    }
    remember(token, h);
    return caller;
  };
  return {
    identify(token: string): Caller | undefined | Promise<Caller | undefined> {
      const h = hashes.get(token) ?? hash(token);
      if (h === leadHash) {
        remember(token, h);
        return { role: 'lead' };
      }
      const now = tokenEpoch();
      if (now !== epoch) {
        agents.clear();
        epoch = now;
      }
      const caller = agents.get(h);
      return caller ?? lookup(token, h, now);
    },
  };
}
