// Request rows of a bare SQLite state file, synchronously (fixtures written before a reader opens
// the file, e.g. `overseer status --watch`'s). A running hub's requests are read through its layer
// instead, on either database: test/helpers/state.ts `request`, `lateAnswers`.
import type { Db } from '../../src/store/db.js';
import type { FullRequestRow, LateAnswerRow, NewRequest } from '../../src/store/sql/requests.js';

export const requestRow = (db: Db, id: string): FullRequestRow | undefined =>
  db.prepare('SELECT * FROM requests WHERE id = ?').get(id) as FullRequestRow | undefined;

export const lateRows = (db: Db, requestId: string): LateAnswerRow[] =>
  db.prepare('SELECT * FROM request_late_answers WHERE request_id = ? ORDER BY id').all(requestId) as LateAnswerRow[];

/** A pending request row, as a test's setup writes it. */
export function insertRequestRow(db: Db, r: NewRequest): void {
  db.prepare(`INSERT INTO requests (id, job_id, kind, summary, plan_json, options_json, status, created_at, tool_name, tool_input_json, expires_at, who)
    VALUES (@id, @job_id, @kind, @summary, @plan_json, @options_json, 'pending', @created_at, @tool_name, @tool_input_json, @expires_at, @who)`).run(r);
}
