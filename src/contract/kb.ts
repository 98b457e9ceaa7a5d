// Zod input schemas of the knowledge base tools (docs/tools.md "Knowledge base", docs/kb.md). Hard limits
// live here; the finer checks of a learning (too short, secrets, duplicates) are the triage's,
// which rejects one learning with a reason instead of failing the whole call.
import { z } from 'zod';

/** The limits of one learning (report_learnings); src/kb/triage.ts cleans a learning within them. */
export const MIN_CONTENT_CHARS = 20;
export const MAX_TITLE_CHARS = 200;
export const MAX_CONTENT_CHARS = 8000;
export const MAX_TAGS = 10;
export const MAX_TAG_CHARS = 40;

export const MAX_QUERY_CHARS = 2000;

const Scope = z.enum(['project', 'global'], {
  errorMap: () => ({ message: 'scope must be "project" (true only of this repository) or "global" (useful in other projects too)' }),
});
const ScopeFilter = z.enum(['project', 'global', 'all'], {
  errorMap: () => ({ message: 'scope must be "project", "global" or "all"' }),
});

export const EntryIdSchema = z.string().regex(/^[pg]-[1-9]\d{0,15}$/, 'entry_id looks like "p-12" (project) or "g-3" (global): take it from search_kb or list_kb');

const Tag = z.string()
  .min(1, 'a tag is empty: drop it')
  .max(MAX_TAG_CHARS, `a tag is longer than ${MAX_TAG_CHARS} characters: use a short keyword like "ci" or "sqlite"`);

export const SearchKbInput = z.object({
  query: z.string({ required_error: 'query is required: the words to search for, e.g. "flaky login test"' })
    .min(1, 'query is empty: give words to search for, e.g. "flaky login test"')
    .max(MAX_QUERY_CHARS, `query is longer than ${MAX_QUERY_CHARS} characters: search with the key words only`)
    .describe('Key words to search for, e.g. "flaky login test"; titles, contents and tags are searched.'),
  scope: ScopeFilter.default('all')
    .describe('"project" = this repository\'s entries, "global" = the ones shared across projects, "all" = both (default "all").'),
  limit: z.number().int('limit must be a whole number').min(1, 'limit must be at least 1').max(50, 'limit must be at most 50').default(10)
    .describe('Most entries to return, best first, 1..50 (default 10).'),
}).strict();
export type SearchKbInput = z.infer<typeof SearchKbInput>;

export const LearningSchema = z.object({
  title: z.string({ required_error: 'each learning needs a title: a short headline' })
    .max(MAX_TITLE_CHARS, `title is longer than ${MAX_TITLE_CHARS} characters: shorten it and put details in content`)
    .describe(`Short headline of the lesson, at most ${MAX_TITLE_CHARS} characters, e.g. "Integration tests need npm run build first".`),
  content: z.string({ required_error: 'each learning needs content: what you learned, how and why' })
    .max(MAX_CONTENT_CHARS, `content is longer than ${MAX_CONTENT_CHARS} characters: keep the essential lesson`)
    .describe(`What you learned, how and why: at least ${MIN_CONTENT_CHARS} characters, never secrets, tokens or passwords.`),
  tags: z.array(Tag).max(MAX_TAGS, `at most ${MAX_TAGS} tags per learning`).optional()
    .describe(`Up to ${MAX_TAGS} short keywords to find it by, e.g. ["ci", "sqlite"] (default: none).`),
  scope: Scope.optional()
    .describe('"project" = true only of this repository, "global" = useful in other projects too (default: the triage decides when OVERSEER_KB_TRIAGE is on, else "project").'),
}).strict();

export const ReportLearningsInput = z.object({
  learnings: z.array(LearningSchema, { required_error: 'learnings is required: a list of 1 to 5 {title, content, tags?, scope?}' })
    .min(1, 'learnings is empty: report at least one {title, content}')
    .max(5, 'at most 5 learnings per call: report the most useful ones, or call again')
    .describe('1 to 5 learnings, each {title, content, tags?, scope?}: things that would save a future agent time.'),
}).strict();
export type ReportLearningsInput = z.infer<typeof ReportLearningsInput>;

export const ListKbInput = z.object({
  scope: ScopeFilter.default('all')
    .describe('"project", "global" or "all" entries (default "all").'),
  tag: Tag.optional().describe('Only entries with this tag, e.g. "ci" (default: any).'),
  limit: z.number().int('limit must be a whole number').min(1, 'limit must be at least 1').max(200, 'limit must be at most 200: page with cursor').default(50)
    .describe('Most entries in one page, 1..200 (default 50); more are reached with cursor.'),
  cursor: EntryIdSchema.optional().describe('The next_cursor of the previous page, to get the next one (default: the first page).'),
}).strict();
export type ListKbInput = z.infer<typeof ListKbInput>;

export const DeleteKbEntryInput = z.object({
  entry_id: EntryIdSchema.describe('Id of the entry to delete, "p-12" (project) or "g-3" (global), from search_kb or list_kb.'),
}).strict();
export type DeleteKbEntryInput = z.infer<typeof DeleteKbEntryInput>;
