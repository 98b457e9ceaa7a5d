// MCP resources of the lead, so jobs, notes and plans can be @-mentioned in Claude Code:
//   overseer://agents/{job_id}          get_agent summary (JSON)
//   overseer://agents/{job_id}/output   readable transcript tail (text, at most 20,000 characters)
//   overseer://notes/{+key}             a note's value (text); the key may contain "/"
//   overseer://workflows/{id}/plan      a workflow's plan (Markdown; only with a workflows dep)
// resources/list enumerates the 50 most recent jobs (summary and output) and the 50 most
// recently written notes (and plans, when the workflows dep can list them).
//
// URIs: variables are percent-encoded and decoded here (the SDK's template matcher hands over
// the raw text). Note keys keep their "/" as path separators (`{+key}` matches across "/"),
// each segment percent-encoded; a key with a "." or ".." segment is encoded whole ("/" as
// %2F), because URL parsing would otherwise resolve those segments away.
// Unknown ids are a JSON-RPC error with code -32002 (the MCP spec's "resource not found") and
// a message that says what exists. Lead only: resources ignore the agent's subtree limits.
import type { Q } from '../store/sql/tx.js';
import { recentJobs } from '../store/sql/jobs.js';
import { recentNoteKeys } from '../store/sql/notes.js';
import type { ResourceTable, ReadResult as ReadResourceResult, ResourceEntry as Resource, Variables } from './resourceTable.js';
import { ErrorCode, RpcError as McpError } from './rpc.js';
import { OverseerError } from '../errors.js';

/** MCP spec: resources/read of a URI that names nothing. */
export const RESOURCE_NOT_FOUND = -32002;
/** Most resources of one kind that resources/list returns. */
export const LIST_LIMIT = 50;
/** Cap of the output resource's text. */
export const OUTPUT_MAX_CHARS = 20_000;
/** Transcript events the output resource renders (then capped to OUTPUT_MAX_CHARS). */
export const OUTPUT_TAIL_EVENTS = 200;

export interface ResourceDeps {
  jobs: {
    /** The get_agent summary; throws (NotFoundError, with known ids in its message) or returns undefined for an unknown id. */
    summary(id: string): unknown;
    /** Readable text of the transcript's last `tail` events (unknown id: as summary). */
    transcriptTail(id: string, tail: number): Promise<string>;
    /** The most recent jobs first, at most `limit`. */
    recent(limit: number): Promise<{ id: string; title: string; status: string }[]>;
  };
  notes: {
    /** NoteService.readWhole: the whole note (a resource has no 20,000-character cap), or `found: false`. */
    read(key: string): Promise<{ value: string; version: number; author: string; updated_at: string } | { found: false }>;
    /** Keys of the most recently written notes first, at most `limit`, optionally under `prefix`. */
    keys(limit: number, prefix?: string): Promise<string[]>;
  };
  workflows?: {
    /** The plan's Markdown, or undefined for an unknown workflow or one without a plan yet. */
    plan(id: string): Promise<string | undefined> | string | undefined;
    /** The most recent workflows first, at most `limit`. */
    recent?(limit: number): Promise<{ id: string; title: string }[]> | { id: string; title: string }[];
  };
}

// ---- URIs -------------------------------------------------------------------------------------

export const agentUri = (id: string): string => `overseer://agents/${encodeURIComponent(id)}`;
export const agentOutputUri = (id: string): string => `${agentUri(id)}/output`;
export const workflowPlanUri = (id: string): string => `overseer://workflows/${encodeURIComponent(id)}/plan`;

/** `overseer://notes/<key>`, "/" kept as a separator unless a segment is "." or "..". */
export function noteUri(key: string): string {
  const segs = key.split('/');
  const path = segs.some((s) => s === '.' || s === '..') ? encodeURIComponent(key) : segs.map(encodeURIComponent).join('/');
  return `overseer://notes/${path}`;
}

function variable(vars: Variables, name: string): string {
  const v = vars[name];
  const raw = Array.isArray(v) ? v.join(',') : (v ?? '');
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `${name} ${JSON.stringify(raw)} is not valid percent-encoding`);
  }
}

const notFound = (message: string): McpError => new McpError(RESOURCE_NOT_FOUND, message);

/** Run a job lookup; an Overseer not_found error (or undefined) becomes a resource-not-found error. */
async function lookup<T>(what: string, fn: () => T | Promise<T>, hint = ''): Promise<NonNullable<T>> {
  let v: T;
  try {
    v = await fn();
  } catch (err) {
    if (err instanceof OverseerError && err.code === 'not_found') throw notFound(err.message);
    throw err;
  }
  if (v === undefined || v === null) throw notFound(`No ${what}${hint}.`);
  return v as NonNullable<T>;
}

/** Keep the end of `text` within `max` characters, saying how much was left out. */
export function capTail(text: string, max = OUTPUT_MAX_CHARS): string {
  if (text.length <= max) return text;
  const omitted = text.length - max + 60;
  return `… (${omitted} earlier characters omitted)\n${text.slice(omitted)}`;
}

// ---- registration ------------------------------------------------------------------------------

/** Register the lead's resource templates (with list callbacks) on the lead's resource table (built once per hub). */
export function registerResources(server: ResourceTable, deps: ResourceDeps): void {
  const recent = (): Promise<{ id: string; title: string; status: string }[]> => deps.jobs.recent(LIST_LIMIT);
  const completeJob = async (value: string): Promise<string[]> => (await recent()).map((j) => j.id).filter((id) => id.startsWith(value));

  server.template(
    'agent',
    'overseer://agents/{job_id}',
    {
      list: async () => ({
        resources: (await recent()).map((j): Resource => ({ uri: agentUri(j.id), name: `agent ${j.id}`, title: `${j.title} (${j.status})`, mimeType: 'application/json' })),
      }),
      complete: { job_id: completeJob },
    },
    { title: 'Agent summary', description: 'Summary of an Overseer agent job (as get_agent): status, turns, cost, result or error, branch, attempts.', mimeType: 'application/json' },
    async (uri, vars): Promise<ReadResourceResult> => {
      const id = variable(vars, 'job_id');
      const summary = await lookup(`agent job ${JSON.stringify(id)}`, () => deps.jobs.summary(id));
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(summary, null, 2) }] };
    },
  );

  server.template(
    'agent-output',
    'overseer://agents/{job_id}/output',
    {
      list: async () => ({
        resources: (await recent()).map((j): Resource => ({ uri: agentOutputUri(j.id), name: `output ${j.id}`, title: `Output of ${j.title} (${j.status})`, mimeType: 'text/plain' })),
      }),
      complete: { job_id: completeJob },
    },
    { title: 'Agent output', description: `Readable tail of an agent's transcript (last ${OUTPUT_TAIL_EVENTS} events, at most ${OUTPUT_MAX_CHARS} characters).`, mimeType: 'text/plain' },
    async (uri, vars): Promise<ReadResourceResult> => {
      const id = variable(vars, 'job_id');
      const text = await lookup(`agent job ${JSON.stringify(id)}`, () => deps.jobs.transcriptTail(id, OUTPUT_TAIL_EVENTS));
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: capTail(text) }] };
    },
  );

  server.template(
    'note',
    'overseer://notes/{+key}',
    {
      list: async () => ({
        resources: (await deps.notes.keys(LIST_LIMIT)).map((k): Resource => ({ uri: noteUri(k), name: `note ${k}`, title: k, mimeType: 'text/plain' })),
      }),
      complete: { key: (value) => deps.notes.keys(LIST_LIMIT, value) },
    },
    { title: 'Note', description: 'The value of an Overseer note (the key may contain "/").', mimeType: 'text/plain' },
    async (uri, vars): Promise<ReadResourceResult> => {
      const key = variable(vars, 'key');
      const n = await deps.notes.read(key);
      if ('found' in n) {
        const slash = key.lastIndexOf('/');
        const prefix = slash > 0 ? key.slice(0, slash + 1) : undefined;
        const near = await deps.notes.keys(10, prefix);
        throw notFound(`No note ${JSON.stringify(key)}.${near.length ? ` Notes${prefix ? ` under ${JSON.stringify(prefix)}` : ''}: ${near.join(', ')}.` : ' There are no notes there yet.'} Use list_notes to see all keys.`);
      }
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: n.value, _meta: { version: n.version, author: n.author, updated_at: n.updated_at } }] };
    },
  );

  const wf = deps.workflows;
  if (wf) {
    server.template(
      'workflow-plan',
      'overseer://workflows/{id}/plan',
      {
        list: wf.recent
          ? async () => ({ resources: (await wf.recent!(LIST_LIMIT)).map((w): Resource => ({ uri: workflowPlanUri(w.id), name: `plan ${w.id}`, title: `Plan: ${w.title}`, mimeType: 'text/markdown' })) })
          : undefined,
      },
      { title: 'Workflow plan', description: 'The milestone plan of an Overseer workflow (Markdown, "- [x]" for done milestones).', mimeType: 'text/markdown' },
      async (uri, vars): Promise<ReadResourceResult> => {
        const id = variable(vars, 'id');
        const plan = await lookup(`plan for workflow ${JSON.stringify(id)}`, () => wf.plan(id), ': the workflow does not exist, or its assess phase has not written the plan yet (see list_workflows and get_workflow)');
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: plan }] };
      },
    );
  }
}

// ---- the hub's implementation of the deps -------------------------------------------------------

/** What hubResourceDeps needs of the hub (structural, so tests can pass a real Hub). */
export interface HubForResources {
  ctx: { sql: { db: Q } };
  jobs: {
    summary(id: string): unknown;
    output(i: { job_id: string; tail: number; format: 'text' }, caller: { role: 'lead' }): Promise<{ output: string | unknown[] }>;
  };
  notes: { readWhole(key: string): Promise<{ value: string; version: number; author: string; updated_at: string } | { key: string; found: false }> };
}

/** ResourceDeps backed by the hub's services and database (recent jobs and notes by SQL). */
export function hubResourceDeps(hub: HubForResources, workflows?: ResourceDeps['workflows']): ResourceDeps {
  return {
    jobs: {
      summary: (id) => hub.jobs.summary(id),
      transcriptTail: async (id, tail) => {
        const r = await hub.jobs.output({ job_id: id, tail, format: 'text' }, { role: 'lead' });
        return typeof r.output === 'string' ? r.output : JSON.stringify(r.output);
      },
      recent: (limit) => recentJobs(hub.ctx.sql.db, limit),
    },
    notes: {
      read: (key) => hub.notes.readWhole(key),
      keys: (limit, prefix) => recentNoteKeys(hub.ctx.sql.db, limit, prefix),
    },
    workflows,
  };
}
