// The Workflows panel: every workflow with its bar, and one workflow whole — the hub's milestone
// record (what was checked off, in which cycle, by which job), the worklogs and contract the hub
// wrote as notes, the blocked reason, its phase jobs — and cancel/resume as the lead would.
//   GET  /api/web/workflows[?status=&limit=]   list_workflows
//   GET  /api/web/workflows/<id>               get_workflow + milestones, worklogs, contract
//   POST /api/web/workflows/<id>/cancel        {}
//   POST /api/web/workflows/<id>/resume        { phase?, cycle?, force? }
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Caller } from '../../services/context.js';
import type { NoteService } from '../../services/notes.js';
import type { WorkflowService } from '../../workflow/service.js';
import { ListWorkflowsInput, ResumeWorkflowInput } from '../../contract/workflows.js';
import { wfKeys } from '../../workflow/state.js';
import { isoTime } from '../../clock.js';
import { PASS, methodNotAllowed, parseBody, parseQuery } from './http.js';

const lead: Caller = { role: 'lead' };
const ListQuery = ListWorkflowsInput.extend({ limit: z.coerce.number().int().min(1).max(100).default(50) });
const ResumeBody = ResumeWorkflowInput.omit({ workflow_id: true });
const CancelBody = z.object({}).strict();

/** A worklog note: `workflow/<id>/worklog/cycle-<n>-<phase>`. */
export interface Worklog { key: string; cycle: number | null; phase: string | null; value: string; version: number; updated_at: string }

export function workflowRoutes(d: { workflows: WorkflowService; notes: NoteService }) {
  const detail = async (id: string) => {
    const workflow = await d.workflows.get(id); // also adopts an old plan note into the record
    const k = wfKeys(workflow.workflow_id);
    const worklogs: Worklog[] = (await d.notes.select([], k.worklogPrefix)).map((n) => {
      const m = /cycle-(\d+)-(\w+)$/.exec(n.key);
      return { key: n.key, cycle: m ? Number(m[1]) : null, phase: m?.[2] ?? null, value: n.value, version: n.version, updated_at: isoTime(n.updated_at) };
    }).sort((a, b) => (b.cycle ?? -1) - (a.cycle ?? -1) || (a.phase === 'review' ? 1 : 0) - (b.phase === 'review' ? 1 : 0));
    return {
      workflow,
      milestones: await d.workflows.milestones(workflow.workflow_id),
      worklogs,
      contract: (await d.notes.get(k.contract))?.value ?? null,
    };
  };

  return async (req: IncomingMessage, _res: ServerResponse, url: URL): Promise<unknown> => {
    const m = /^\/api\/web\/workflows(?:\/([^/]+)(?:\/(cancel|resume))?)?\/?$/.exec(url.pathname);
    if (!m) return PASS;
    const id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    const action = m[2];
    if (!action) {
      if (req.method !== 'GET') throw methodNotAllowed(req, 'GET', url.pathname);
      if (id) return detail(id);
      return d.workflows.list(parseQuery(url, ListQuery, ['status', 'limit']));
    }
    if (req.method !== 'POST') throw methodNotAllowed(req, 'POST', url.pathname);
    if (action === 'cancel') {
      await parseBody(req, CancelBody);
      await d.workflows.cancel(id!, lead);
    } else {
      const b = await parseBody(req, ResumeBody);
      await d.workflows.resume({ ...b, workflow_id: id! }, lead);
    }
    return detail(id!);
  };
}
