// When the lock mount is what stopped a write (a program the hook could not see into wrote a
// file another agent holds: EROFS, or EBUSY for a rename onto it), the agent reads an errno, not
// a reason. This turns such a tool result into the lock's own words — which file, who holds it,
// why, until when, and how to wait — sent into the writer's conversation once per file and holder.
import { basename } from 'node:path';

/** What the file systems say when a bind mount is read-only (EROFS) or a mount point (EBUSY). */
const REFUSED = /\bEROFS\b|\bEBUSY\b|read-only file system|resource busy|errno 30\b|errno 16\b/i;

export interface BoundLock {
  path: string;
  holder: string;
  /** `agent j-1 ("title")` or `the lead`. */
  holderText: string;
  reason: string | null;
  until: string;
}

/** The locks a tool result's refusal is about: bound read-only for the writer, and named in the text. */
export function refusedBy(text: string, bound: readonly BoundLock[]): BoundLock[] {
  if (!text || !REFUSED.test(text)) return [];
  return bound.filter((b) => text.includes(b.path) || mentions(text, basename(b.path)));
}

/** `name` as a whole word of `text` (a file name in an error line: 'x.txt', ./x.txt, /dir/x.txt). */
function mentions(text: string, name: string): boolean {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[\\s'"\`/(:])${esc}($|[\\s'"\`:),])`, 'm').test(text);
}

export function refusalText(locks: readonly BoundLock[]): string {
  const each = locks.map((l) => `${l.path} is held by ${l.holderText}${l.reason ? ` for "${l.reason}"` : ''} until ${l.until}`).join('; ');
  const files = locks.map((l) => JSON.stringify(l.path)).join(', ');
  return `Overseer: your last write was refused by a file lock, not by the file system: ${each}. A held file is read-only in your sandbox until its lock ends. To wait for it, call lock_files with files [${files}] and a timeout_s (e.g. 300), then write again; or work on other files meanwhile.`;
}

/** Says each (writer, file, holder) once: an agent retrying the same write is not told again and again. */
export class RefusalNotices {
  private readonly told = new Set<string>();

  constructor(private readonly d: {
    bound(writer: string): BoundLock[];
    tell(writer: string, text: string, locks: BoundLock[]): void;
  }) {}

  toolResults(writer: string, texts: readonly string[]): void {
    const hits = new Map<string, BoundLock>();
    for (const t of texts) {
      if (!t || !REFUSED.test(t)) continue;
      for (const l of refusedBy(t, this.d.bound(writer))) hits.set(l.path, l);
    }
    const fresh = [...hits.values()].filter((l) => !this.told.has(`${writer}\0${l.path}\0${l.holder}`));
    if (fresh.length === 0) return;
    for (const l of fresh) this.told.add(`${writer}\0${l.path}\0${l.holder}`);
    if (this.told.size > 10_000) this.told.clear();
    this.d.tell(writer, refusalText(fresh), fresh);
  }
}
