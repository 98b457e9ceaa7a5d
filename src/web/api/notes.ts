// The Notes panel: every note's key, version, author and the start of its value (live: the page
// reads again when the floor stream says something changed — a note write is one of its
// events), and one note whole.
//   GET /api/web/notes[?prefix=&cursor=]   { notes: [{ key, version, author, author_title, updated_at, chars, preview }], next_cursor }
//   GET /api/web/note?key=<key>            the whole note, or 404
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { HubContext } from '../../services/context.js';
import type { NoteService } from '../../services/notes.js';
import { isoTime } from '../../clock.js';
import { getNote, selectNotes } from '../../store/sql/notes.js';
import { titlesOf } from '../../store/sql/jobs.js';
import { ListNotesInput, NoteKey } from '../../contract/notes.js';
import { HttpError, PASS, methodNotAllowed, parseQuery } from './http.js';

const PREVIEW = 240;
const PAGE = 200;
// list_notes' and read_note's own fields (src/contract/notes.ts).
const ListQuery = ListNotesInput.pick({ prefix: true, cursor: true });
const OneQuery = z.object({ key: z.string({ required_error: 'key is required: the note\'s key, e.g. ?key=plan/api' }).pipe(NoteKey) });

export function noteRoutes(d: { ctx: HubContext; notes: NoteService }) {
  /** The titles of the jobs among `authors` (an agent's note names its job; the lead's and the hub's do not). */
  const titlesOfAuthors = async (authors: readonly string[]): Promise<(author: string) => string | null> => {
    const titles = await titlesOf(d.ctx.sql.db, authors.filter((a) => /^j-/.test(a)));
    return (author) => titles.get(author) ?? null;
  };
  return async (req: IncomingMessage, _res: ServerResponse, url: URL): Promise<unknown> => {
    if (url.pathname !== '/api/web/notes' && url.pathname !== '/api/web/note') return PASS;
    if (req.method !== 'GET') throw methodNotAllowed(req, 'GET', url.pathname);
    if (url.pathname === '/api/web/note') {
      const { key } = parseQuery(url, OneQuery, ['key']);
      const n = await getNote(d.ctx.sql.db, key);
      if (!n) throw new HttpError(404, 'not_found', `no note ${JSON.stringify(key)} (it may have been deleted)`);
      const titleOf = await titlesOfAuthors([n.author]);
      return { key: n.key, value: n.value, version: n.version, author: n.author, author_title: titleOf(n.author), updated_at: isoTime(n.updated_at) };
    }
    const q = parseQuery(url, ListQuery, ['prefix', 'cursor']);
    const page = await d.notes.list({ prefix: q.prefix, cursor: q.cursor, limit: PAGE });
    const rows = new Map((await selectNotes(d.ctx.sql.db, page.notes.map((n) => n.key), undefined)).map((r) => [r.key, r.value]));
    const titleOf = await titlesOfAuthors(page.notes.map((n) => n.author));
    return {
      notes: page.notes.map((n) => {
        const v = rows.get(n.key) ?? '';
        return { ...n, author_title: titleOf(n.author), chars: v.length, preview: v.length > PREVIEW ? `${v.slice(0, PREVIEW)}…` : v };
      }),
      next_cursor: page.next_cursor,
    };
  };
}
