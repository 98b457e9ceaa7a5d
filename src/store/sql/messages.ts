// Messages between the lead and agents (table messages) over the layer (issue 29 step 3). The id
// comes back from the insert (RETURNING, on both databases; SQLite's lastInsertRowid before).
import type { Q } from './tx.js';
import type { MessageRow } from '../jobs.js';

/** Store a message; `delivered`: it was pushed into the recipient's conversation now. Returns its id. */
export async function addMessage(q: Q, m: { from: string; to: string; text: string; now: number; delivered: boolean }): Promise<number> {
  const r = await q.insertInto('messages').values({ from_id: m.from, to_id: m.to, text: m.text, created_at: m.now, delivered_at: m.delivered ? m.now : null })
    .returning('id').executeTakeFirstOrThrow();
  return r.id;
}

/** The newest `limit` messages to `to` (only unread ones with `unreadOnly`), newest first. */
export async function inbox(q: Q, to: string, o: { unreadOnly: boolean; limit: number }): Promise<MessageRow[]> {
  let s = q.selectFrom('messages').selectAll().where('to_id', '=', to);
  if (o.unreadOnly) s = s.where('read_at', 'is', null);
  return s.orderBy('id', 'desc').limit(o.limit).execute();
}

/** Mark messages read (those not read already keep their first time). */
export async function markMessagesRead(q: Q, ids: readonly number[], now: number): Promise<void> {
  if (!ids.length) return;
  await q.updateTable('messages').set({ read_at: now }).where('id', 'in', [...ids]).where('read_at', 'is', null).execute();
}

/** Unread messages to `to` from any of `senders`, oldest first (wait_for_agents' attention). */
export async function unreadFrom(q: Q, to: string, senders: readonly string[]): Promise<MessageRow[]> {
  if (!senders.length) return [];
  return q.selectFrom('messages').selectAll().where('to_id', '=', to).where('read_at', 'is', null).where('from_id', 'in', [...senders]).orderBy('id').execute();
}

/** Messages to `to` not yet pushed into its conversation, oldest first (they go in when it can take them). */
export async function undelivered(q: Q, to: string): Promise<MessageRow[]> {
  return q.selectFrom('messages').selectAll().where('to_id', '=', to).where('delivered_at', 'is', null).orderBy('id').execute();
}

/** Mark messages pushed into their recipient's conversation. */
export async function markDelivered(q: Q, ids: readonly number[], now: number): Promise<void> {
  if (!ids.length) return;
  await q.updateTable('messages').set({ delivered_at: now }).where('id', 'in', [...ids]).execute();
}

/**
 * Take the messages to `to` not pushed yet, to push them now: marked delivered by one conditional
 * UPDATE, so of two takers (a child's start and a `deliver` that found it running, or two hubs)
 * each row goes to one only. Oldest first. What could not be pushed after all goes back with `untake`.
 */
export async function takeUndelivered(q: Q, to: string, now: number): Promise<MessageRow[]> {
  const rows = await q.updateTable('messages').set({ delivered_at: now }).where('to_id', '=', to).where('delivered_at', 'is', null).returningAll().execute();
  return rows.sort((a, b) => a.id - b.id);
}

/** Messages taken but not pushed (the conversation ended meanwhile): undelivered again. */
export async function untake(q: Q, ids: readonly number[]): Promise<void> {
  if (!ids.length) return;
  await q.updateTable('messages').set({ delivered_at: null }).where('id', 'in', [...ids]).execute();
}
