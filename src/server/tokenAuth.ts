// Bearer token → caller, for every HTTP request of the hub (src/server/http.ts HttpAuth).
// The lead token is compared by hash; an agent token is valid exactly while a job row carries
// its hash (runner.ts sets it when an attempt starts and clears it when the job ends, reconcile
// clears it at start). Per request this costs a SHA-256 and an indexed lookup; the hash of a
// token that resolved is remembered (it is a pure function of the token: remembering it revokes
// nothing), the job row is read on every request, so a token whose job ended stops working at
// once. Only the job id is read, with a prepared statement (not the whole row).
import type { Db } from '../store/db.js';
import type { Caller } from '../services/context.js';
import type { HttpAuth } from './http.js';

/** Hashes kept at most (then forgotten at once; a crew's tokens are far fewer). */
const MAX_REMEMBERED = 4096;

export function tokenAuth(db: Db, leadHash: string, hash: (token: string) => string): HttpAuth {
  const hashes = new Map<string, string>();
  const byHash = db.prepare('SELECT id FROM jobs WHERE token_hash = ?');
  return {
    identify(token: string): Caller | undefined {
      const known = hashes.get(token);
      const h = known ?? hash(token);
      let caller: Caller | undefined;
      if (h === leadHash) caller = { role: 'lead' };
      else {
        const job = byHash.get(h) as { id: string } | undefined;
        caller = job ? { role: 'agent', jobId: job.id } : undefined;
      }
      if (caller && known === undefined) {
        if (hashes.size >= MAX_REMEMBERED) hashes.clear();
        hashes.set(token, h);
      }
      return caller;
    },
  };
}
