// The hub's lock guard, composed: held files from the locks table (not the lead's: its writes
// have no tool stream to tell them apart), undone writes kept beside the writer's transcripts,
// reports through the messages service.
import { join } from 'node:path';
import type { HubContext } from '../services/context.js';
import type { MessageService } from '../services/messages.js';
import { heldLocks } from '../store/locks.js';
import { LockGuard } from './lockGuard.js';
import type { LockMounts } from './lockMounts.js';
import { reportViolation } from './violationReport.js';
import { RefusalNotices, type BoundLock } from './mountRefusal.js';
import { isoTime } from '../clock.js';
import { addEvent } from '../store/sql/jobs.js';
import { addMessage } from '../store/sql/messages.js';

export function guardLocks(ctx: HubContext, messages: MessageService, mounts?: LockMounts): LockGuard {
  const holderText = (holder: string): string => {
    if (holder === 'lead') return 'the lead';
    // mixed period: until step 9 — RefusalNotices asks for the bound locks synchronously, read with heldLocks beside it.
    const j = ctx.store.get(holder);
    return j ? `agent ${holder} ("${j.title}")` : `agent ${holder}`;
  };
  const notices = new RefusalNotices({
    bound: (writer) => {
      const mine = new Set(mounts?.mountedFor(writer) ?? []);
      if (mine.size === 0) return [];
      return heldLocks(ctx.db).filter((l) => mine.has(l.path) && l.holder !== writer)
        .map((l): BoundLock => ({ path: l.path, holder: l.holder, holderText: holderText(l.holder), reason: l.reason, until: isoTime(l.expires_at) }));
    },
    tell: (writer, text, bound) => {
      addEvent(ctx.sql.db, writer, ctx.clock.now(), 'lock_refused', { files: bound.map((b) => b.path), holders: bound.map((b) => b.holder), by: 'mount' })
        .catch((err: unknown) => ctx.log.warn({ err, writer }, 'lock_refused event not stored'));
      messages.notify('overseer', writer, text);
    },
  });
  return new LockGuard({
    refused: (writer, texts) => notices.toolResults(writer, texts),
    // mixed period: until step 9 — LockGuard asks synchronously, as it reads held locks (heldLocks).
    sealed: mounts
      ? (path, holder) => ctx.store.byStatus('running').every((j) => j.id === holder || mounts.mountedFor(j.id).includes(path))
      : undefined,
    held: () => heldLocks(ctx.db).filter((l) => l.holder !== 'lead').map((l) => ({ path: l.path, holder: l.holder })),
    keepDir: (writer) => join(ctx.config.home, 'agents', writer, 'undone'),
    now: () => ctx.clock.now(),
    report: (v) => void reportViolation(ctx, {
      deliver: (from, to, text) => messages.notify(from, to, text),
      toLead: (about, text) => {
        addMessage(ctx.sql.db, { from: about, to: 'lead', text, now: ctx.clock.now(), delivered: false })
          .then(() => ctx.bus.emit('message', { to: 'lead' }), (err: unknown) => ctx.log.warn({ err, about }, 'message to the lead not stored'));
      },
    }, v).catch((err: unknown) => ctx.log.error({ err, writer: v.writer, path: v.path }, 'lock guard: reporting an undone write failed')),
  });
}
