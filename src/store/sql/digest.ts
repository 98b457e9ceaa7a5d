// The lead's "since you last looked" digest (src/floor/digest.ts) reads three things that happened
// in [since, until): jobs that ended, requests still pending that opened, open warnings the lead has
// not seen. They come in ONE statement (a UNION ALL): one round trip on PostgreSQL instead of a
// read-only transaction of three SELECTs (five), and still one consistent view of the three, since
// a statement sees one snapshot on both databases.
import { sql } from 'kysely';
import type { Q } from './tx.js';
import type { JobRow } from '../jobs.js';
import type { FullRequestRow } from './requests.js';
import type { WarningRow } from '../warnings.js';

export interface DigestRows {
  /** Ended jobs, by ended_at. */
  ended: Pick<JobRow, 'id' | 'title' | 'status' | 'failure_class' | 'result' | 'error' | 'ended_at'>[];
  /** Pending requests, by created_at. */
  requests: Pick<FullRequestRow, 'id' | 'job_id' | 'kind' | 'summary' | 'created_at'>[];
  /** Open warnings the lead has not seen, oldest first. */
  warnings: Pick<WarningRow, 'job_id' | 'kind' | 'detail' | 'raised_at'>[];
}

interface Row {
  part: 'e' | 'r' | 'w'; ord: number; id: string | null; job_id: string | null; title: string | null; status: string | null;
  failure_class: string | null; result: string | null; error: string | null; kind: string | null; text: string | null; at: number;
}

const T = sql`CAST(NULL AS TEXT)`;

export async function digestBetween(q: Q, since: number, until: number): Promise<DigestRows> {
  const { rows } = await sql<Row>`
    SELECT 'e' AS part, ended_at AS ord, id, CAST(NULL AS TEXT) AS job_id, title, status, failure_class, result, error, ${T} AS kind, ${T} AS text, ended_at AS at
      FROM jobs WHERE ended_at >= ${since} AND ended_at < ${until} AND status IN ('succeeded', 'failed', 'cancelled', 'interrupted')
    UNION ALL
    SELECT 'r', created_at, id, job_id, ${T}, ${T}, ${T}, ${T}, ${T}, kind, summary, created_at
      FROM requests WHERE status = 'pending' AND created_at >= ${since} AND created_at < ${until}
    UNION ALL
    SELECT 'w', CAST(id AS BIGINT), ${T}, job_id, ${T}, ${T}, ${T}, ${T}, ${T}, kind, detail, raised_at
      FROM job_warnings WHERE cleared_at IS NULL AND lead_seen_at IS NULL AND raised_at >= ${since} AND raised_at < ${until}
    ORDER BY part, ord`.execute(q);
  const out: DigestRows = { ended: [], requests: [], warnings: [] };
  for (const r of rows) {
    const at = Number(r.at);
    if (r.part === 'e') out.ended.push({ id: r.id!, title: r.title!, status: r.status! as JobRow['status'], failure_class: r.failure_class as JobRow['failure_class'], result: r.result, error: r.error, ended_at: at });
    else if (r.part === 'r') out.requests.push({ id: r.id!, job_id: r.job_id!, kind: r.kind! as FullRequestRow['kind'], summary: r.text!, created_at: at });
    else out.warnings.push({ job_id: r.job_id!, kind: r.kind! as WarningRow['kind'], detail: r.text!, raised_at: at });
  }
  return out;
}
