// The hub's lock guard, composed: held files from the locks table (not the lead's: its writes
// have no tool stream to tell them apart), undone writes kept beside the writer's transcripts,
// reports through the messages service. The guard reads the locks through the layer at each lock
// change; the mount refusals answer from what that read saw (the locks, their holders' titles),
// the same locks the mounts bound from (src/confine/lockMounts.ts keeps its own, read per pass).
// A lock guards the holder's own file and its copies in the clones other running children work in
// (src/confine/lockMap.ts), from the children's scopes the mounts keep (or, unconfined, its own).
import { join } from 'node:path';
import type { HubContext } from '../services/context.js';
import type { MessageService } from '../services/messages.js';
import type { LockRow } from '../store/locks.js';
import { allLocks } from '../store/sql/locks.js';
import { ChildScopes, treeOf } from './childScopes.js';
import { protectedFiles } from './lockMap.js';
import { LockGuard } from './lockGuard.js';
import type { LockMounts } from './lockMounts.js';
import { reportViolation } from './violationReport.js';
import { RefusalNotices, type BoundLock } from './mountRefusal.js';
import { isoTime } from '../clock.js';
import { addEvent, jobsByStatus, titlesOf } from '../store/sql/jobs.js';
import { addMessage } from '../store/sql/messages.js';
import { isLead, leadHub } from '../domain/lead.js';

export function guardLocks(ctx: HubContext, messages: MessageService, hubId: string, mounts?: LockMounts): LockGuard {
  // The locks and their holders' titles as the last lock change read them. RefusalNotices asks
  // synchronously (a tool result of the stream); a lock changed since is bound or unbound by the
  // mounts' pass after the same change, so what a refusal names is what was bound when it was written.
  let view: { locks: LockRow[]; titles: Map<string, string> } = { locks: [], titles: new Map() };
  // Each running child's scope, looked up once per child: the mounts' when they run (they keep
  // it current), else the guard's own, forgotten as children end.
  const scopes = mounts?.scopes ?? new ChildScopes();
  const holderText = (holder: string): string => {
    if (isLead(holder)) return holder === messages.lead ? 'the lead' : `the lead on hub ${leadHub(holder) ?? '?'}`;
    const title = view.titles.get(holder);
    return title === undefined ? `agent ${holder}` : `agent ${holder} ("${title}")`;
  };
  const notices = new RefusalNotices({
    bound: (writer) => {
      const mine = new Set(mounts?.mountedFor(writer) ?? []);
      if (mine.size === 0) return [];
      return view.locks.filter((l) => mine.has(l.path) && l.holder !== writer)
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
    // The mounts know which children run and what each has bound (their last pass and the starts since).
    sealed: mounts ? (path, holder) => mounts.sealed(path, holder) : undefined,
    held: async () => {
      try {
        const locks = await allLocks(ctx.sql.db);
        view = { locks, titles: await titlesOf(ctx.sql.db, locks.map((l) => l.holder).filter((h) => !isLead(h))) };
        // Only what this hub's children could touch: a holder running on another hub or worker writes
        // when this hub cannot see (its tool calls are not in flight here), on a tree of its own
        // machine; that hub's guard watches it. Guarding it here took its own concurrent writes for a
        // child's of this hub and undid them (test/e2e/workers-netns.test.ts).
        const running = await jobsByStatus(ctx.sql.db, 'running');
        const elsewhere = new Set(running.filter((j) => j.hub_id && j.hub_id !== hubId).map((j) => j.id));
        const mine = running.filter((j) => !elsewhere.has(j.id));
        if (!mounts) scopes.keep(new Set(mine.map((j) => j.id)));
        const children = await Promise.all(mine.map(async (j) => ({ jobId: j.id, scope: await scopes.of(j.id, treeOf(j)) })));
        const held = locks.filter((l) => !isLead(l.holder) && !elsewhere.has(l.holder)).map((l) => ({ path: l.path, holder: l.holder, repo: l.repo, rel: l.rel_path }));
        return protectedFiles(held, children);
      } catch (err) {
        ctx.log.warn({ err }, 'lock guard: the locks could not be read; held files are guarded as before until the next lock change');
        return undefined;
      }
    },
    keepDir: (writer) => join(ctx.config.home, 'agents', writer, 'undone'),
    now: () => ctx.clock.now(),
    report: (v) => void reportViolation(ctx, {
      deliver: (from, to, text) => messages.notify(from, to, text),
      toLead: (about, text) => {
        addMessage(ctx.sql.db, { from: about, to: messages.lead, text, now: ctx.clock.now(), delivered: false })
          .then(() => ctx.bus.emit('message', { to: messages.lead }), (err: unknown) => ctx.log.warn({ err, about }, 'message to the lead not stored'));
      },
    }, v).catch((err: unknown) => ctx.log.error({ err, writer: v.writer, path: v.path }, 'lock guard: reporting an undone write failed')),
  });
}
