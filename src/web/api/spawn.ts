// The dashboard starts agents as the lead does (issue 31 point 5), through the same service as the
// spawn_agent tool (JobService.spawn, the lead as caller):
//   POST /api/web/jobs               a new agent; the body is spawn_agent's input (the "New agent" form)
//   POST /api/web/jobs/<id>/rerun    a new job with the same spec as an ended one (prompt and options)
// "Continue" is POST /api/web/jobs/<id>/resume with a message (jobs.ts), as resume_agent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../../services/context.js';
import type { JobService } from '../../services/jobs.js';
import type { JobRow } from '../../store/jobs.js';
import { SpawnInput } from '../../contract/agents.js';
import { HttpError, PASS, methodNotAllowed, parseBody } from './http.js';

const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);
const GUIDELINES = '\n\n## Guidelines\n\n';

/** spawn_agent's input that makes the same job again: its prompt and the options it ran with (a new branch name). */
export function rerunSpec(j: JobRow): SpawnInput {
  // A template's body was added to the prompt as ## Guidelines: name the template again instead.
  const cut = j.template ? j.prompt.lastIndexOf(GUIDELINES) : -1;
  const json = <T>(s: string | null | undefined, fallback: T): T => (s ? JSON.parse(s) as T : fallback);
  const spec = {
    prompt: cut >= 0 ? j.prompt.slice(0, cut) : j.prompt,
    title: j.title, provider: j.provider as 'claude' | 'codex', ...(j.model ? { model: j.model } : {}),
    cwd: j.cwd, worktree: j.worktree === 1, priority: j.priority,
    ...(j.max_turns !== null ? { max_turns: j.max_turns } : {}), ...(j.budget_usd !== null ? { budget_usd: j.budget_usd } : {}), ...(j.timeout_s !== null ? { timeout_s: j.timeout_s } : {}),
    ...(j.context_json ? { context: json<Record<string, string>>(j.context_json, {}) } : {}), ...(j.template ? { template: j.template } : {}),
    checks: json<string[]>(j.checks_json, []), retry: j.retry, labels: json<string[]>(j.labels_json, []), depends_on: json<string[]>(j.depends_on_json, []),
    ...(j.project ? { project: j.project } : {}), ...(j.role ? { role: j.role } : {}),
  };
  return SpawnInput.parse(spec);
}

export function spawnRoutes(d: { jobs: JobService }): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<unknown> {
  const lead: Caller = { role: 'lead' };
  return async (req, _res, url) => {
    if (url.pathname === '/api/web/jobs') {
      if (req.method !== 'POST') throw methodNotAllowed(req, 'POST', url.pathname);
      return d.jobs.spawn(await parseBody(req, SpawnInput), lead);
    }
    const m = /^\/api\/web\/jobs\/([^/]+)\/rerun$/.exec(url.pathname);
    if (!m) return PASS;
    if (req.method !== 'POST') throw methodNotAllowed(req, 'POST', url.pathname);
    const j = await d.jobs.job(decodeURIComponent(m[1]!));
    if (!ENDED.has(j.status)) throw new HttpError(409, 'invalid_state', `job ${j.id} is ${j.status}: only an ended job is re-run (cancel it first, or wait for it)`);
    return d.jobs.spawn(rerunSpec(j), lead);
  };
}
