// The end of one attempt's transcript as the database holds it (`transcript_rows`, the search
// index: src/search): what the agent said and which tools it called, newest kept, within a
// budget of characters. A lost worker's session file is gone with its machine; these rows are
// what is left of the attempt (docs/workers-plan.md §3 "Transcripts", §5).
import type { Kysely } from 'kysely';
import type { Schema } from './schema.js';

export interface TailRow {
  kind: 'text' | 'tool_call';
  tool: string | null;
  body: string;
}

export interface TranscriptTail {
  /** Oldest first, the newest rows that fit the budget. */
  rows: TailRow[];
  /** Rows of the attempt left out (older ones past the budget). */
  omitted: number;
}

/** Rows read at most (newest first); older ones count as omitted. */
const READ_AT_MOST = 400;

/**
 * The newest assistant text and tool calls of (`jobId`, `attempt`) whose bodies, each cut to
 * `rowChars`, add up to at most `budgetChars`, oldest first. Tool results are left out: the next
 * attempt has a fresh work tree, what the agent concluded from them is in its text.
 */
export async function transcriptTail(q: Kysely<Schema>, jobId: string, attempt: number, budgetChars: number, rowChars = 1500): Promise<TranscriptTail> {
  const base = q.selectFrom('transcript_rows').where('job_id', '=', jobId).where('attempt', '=', attempt).where('kind', 'in', ['text', 'tool_call']);
  const { n } = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const newest = await base.select(['kind', 'tool', 'body']).orderBy('id', 'desc').limit(READ_AT_MOST).execute();
  const rows: TailRow[] = [];
  let used = 0;
  for (const r of newest) {
    const body = r.body.length > rowChars ? `${r.body.slice(0, rowChars)}…` : r.body;
    if (used + body.length > budgetChars) break;
    used += body.length;
    rows.push({ kind: r.kind as TailRow['kind'], tool: r.tool, body });
  }
  return { rows: rows.reverse(), omitted: Number(n) - rows.length };
}
