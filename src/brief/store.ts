// The crew brief's row (migration 33: crew_brief, at most one row, id 1). Written only by the hub
// for the lead or the person (src/brief/service.ts); agents have no path to it.
import type { Q } from '../store/sql/tx.js';
import type { CrewBriefTable } from '../store/sql/schema.js';

export type BriefRow = CrewBriefTable;

export async function readBrief(q: Q): Promise<BriefRow | undefined> {
  return q.selectFrom('crew_brief').selectAll().where('id', '=', 1).executeTakeFirst();
}

/** Set (text) or clear (null) the brief: one statement, the version +1 (last write wins). */
export async function writeBrief(q: Q, text: string | null, setBy: string, now: number): Promise<BriefRow> {
  const row = await q.insertInto('crew_brief').values({ id: 1, text, set_by: setBy, version: 1, set_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ text, set_by: setBy, set_at: now, version: eb('crew_brief.version', '+', 1) })))
    .returningAll().executeTakeFirstOrThrow();
  return row;
}
