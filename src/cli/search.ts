// `overseer search <query...> [--job j] [--label l] [--since 2h] [--limit n] [--json]`: what the
// agents said, newest first, from the transcript index in the state database (read-only: works
// with or without a running hub; a running hub's last ~100 ms of output may not be written yet).
// The words are one query in search_output's syntax (docs/search.md); a phrase needs its quotes
// past the shell: overseer search '"connection refused"'. Exit 2 for a bad query or option.
import { hasIndex, MAX_LIMIT, TranscriptSearch, transcriptIndex, type SearchOptions, type SearchResult } from '../search/index.js';
import { intOption } from './args.js';
import { CliError, UsageError } from './errors.js';
import { openState, resolveJob } from './state.js';

export interface SearchCliOptions { job?: string; label?: string; since?: string; limit?: string; json?: boolean }

export async function runSearch(words: string[], opts: SearchCliOptions): Promise<void> {
  // Unknown options reach here as words (-word is the query's "without"): a --word is a typo.
  const typo = words.find((w) => /^--[A-Za-z]/.test(w));
  if (typo) throw new UsageError(`unknown option ${JSON.stringify(typo)}: the options are --job, --label, --since, --limit, --json (to search for the word, leave out the dashes).`);
  const query = words.join(' ');
  if (query.trim() === '') throw new UsageError('give words to search for, e.g. overseer search connection refused');
  const limit = intOption('limit', opts.limit, 1, MAX_LIMIT);
  const s = await openState();
  try {
    if (!(await hasIndex(s.sql))) {
      throw new CliError(`The state at ${s.home} has no transcript index yet: a hub of this version builds it when it starts (overseer mcp or overseer serve). Start one, then search again.`);
    }
    const o: SearchOptions = { query };
    if (opts.job !== undefined) o.job_id = (await resolveJob(s, opts.job)).id;
    if (opts.label !== undefined) o.label = opts.label;
    if (opts.since !== undefined) o.since = opts.since;
    if (limit !== undefined) o.limit = limit;
    // The layer over the CLI's own read-only handle (closed with it: State.close).
    const r = await new TranscriptSearch(s.sql.db, transcriptIndex(s.sql.dialect), { now: () => Date.now() }).search(o, { role: 'lead' });
    process.stdout.write(opts.json ? `${JSON.stringify(r, null, 2)}\n` : render(r));
  } finally {
    await s.close();
  }
}

/** One header line per hit (time, job, attempt, title, kind and tool), its snippet indented under it. */
export function render(r: SearchResult): string {
  if (r.results.length === 0) return `No matches.${r.indexing ? ` (${r.indexing})` : ''}\n`;
  const lines: string[] = [];
  for (const h of r.results) {
    const what = h.tool ? `${h.kind} ${h.tool}` : h.kind;
    lines.push(`${h.at.replace('T', ' ').slice(0, 19)}  ${h.job_id} #${h.attempt}  ${h.title}  [${what}]`, `    ${h.snippet}`);
  }
  const shown = r.results.length;
  const total = r.total_capped ? `${r.total_hint}+` : String(r.total_hint);
  lines.push('', `${shown} of ${total} matches, newest first (${r.took_ms} ms)${r.omitted ? `; ${r.omitted} more did not fit: use --limit or narrow the query` : ''}${r.indexing ? `; ${r.indexing}` : ''}`);
  return `${lines.join('\n')}\n`;
}
