// What the watch's keys do, through the running hub with the lead token — the same calls as
// `overseer respond` (the requests API, src/approvals/client.ts) and `overseer msg|pause|resume|
// cancel` (the lead's tools, src/cli/hubTools.ts, reached through the HubConnector the command
// passes in) — so the hub checks and records every action as it does for the CLI. Each call
// resolves to one line for the status bar; failures throw Errors whose message is that line (the
// hub's own text where it has one).
import type { RequestView } from '../approvals/view.js';
import { closedHow } from '../approvals/rules.js';
import { readHubInfo } from '../hubfiles/hubLock.js';
import type { JobRef, RequestRef, RunRef } from './keys.js';

/** The lead's tools on the running hub, as the CLI reaches them (src/cli/hubTools.ts). */
export interface HubTools {
  call(tool: string, args: Record<string, unknown>, timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

/** How the watch reaches those tools, passed in by its command (src/cli/watch.ts). */
export interface HubConnector {
  connect(home: string): Promise<HubTools>;
  /** Is `err` the tool's own refusal (bad input, wrong state), not a failed connection? */
  refused(err: unknown): Promise<boolean>;
}

/** Statuses in which an agent has ended (nothing runs to pause, cancel or message live). */
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

export interface Crew {
  /** The request as the hub has it now (to see whether it is still open, and who may answer). */
  request(id: string): Promise<RequestView>;
  /** Answers a request as the person; `confirmed`: the person said yes on this terminal. */
  respond(req: RequestRef, answer: { decision?: 'approved' | 'rejected'; answer?: string }, confirmed: boolean): Promise<string>;
  message(job: JobRef, text: string): Promise<string>;
  pause(job: JobRef, mode: 'freeze' | 'stop'): Promise<string>;
  resume(job: JobRef): Promise<string>;
  cancel(job: JobRef): Promise<string>;
  /** A script run (cancel_run, pause_run): the whole run, its pause, or one call of it. */
  cancelRun(run: RunRef): Promise<string>;
  pauseRun(run: RunRef, paused: boolean): Promise<string>;
  cancelCall(run: RunRef, seq: number): Promise<string>;
  /** READY TO SHIP (the floor's API, src/floor/http.ts): merge the job's branch through the merge queue, or dismiss it. */
  ship(job: JobRef): Promise<string>;
  dismiss(job: JobRef): Promise<string>;
  /** READY TO SHIP: send the job's last failed merge back to its agent (the send_back tool's code). */
  sendBack(job: JobRef): Promise<string>;
  close(): Promise<void>;
}

const short = (j: JobRef): string => `"${j.title}" (${j.job_id})`;

/** `request X closed at T (approved by lead): nothing to answer` — when a request is no longer open. */
export function closedLine(q: RequestView): string {
  return `request ${q.request_id} closed${q.answered_at ? ` at ${q.answered_at}` : ''} (${closedHow(q)}): nothing to answer`;
}

/** The hub of `home`, reached per action (a hub that restarts in between is found again). */
export function hubCrew(home: string, connector: HubConnector): Crew {
  let tools: Promise<HubTools> | undefined;
  const hub = async (): Promise<HubTools> => {
    if (!readHubInfo(home)?.url) throw new Error(`no hub runs for ${home}: actions need a running hub (start your lead's Claude Code, or overseer serve)`);
    // The MCP client loads on the first action: a watch that only watches never pays for it.
    tools ??= connector.connect(home);
    try {
      return await tools;
    } catch (err) {
      tools = undefined;
      throw err;
    }
  };
  /** A tool call. A refusal is the hub's answer; any other failure (the hub restarted, the
   * connection dropped) drops the connection so the next key reconnects — never retried here,
   * so an action is never sent twice. */
  const call = async (tool: string, args: Record<string, unknown>): Promise<any> => {
    const h = await hub();
    try {
      return await h.call(tool, args);
    } catch (err) {
      if (await connector.refused(err)) throw err;
      tools = undefined;
      void h.close();
      throw new Error(`the hub did not answer ${tool} (${(err as Error).message}); if it restarted, press the key again`);
    }
  };
  const api = async () => (await import('../approvals/client.js')).requestsClient(home);
  const apiError = (r: { status: number; body: any }): Error => new Error(String(r.body?.error?.message ?? `the hub answered HTTP ${r.status}`));
  /** The job's status now, from the hub (get_agent). */
  const statusOf = async (j: JobRef): Promise<string> => (await call('get_agent', { job_id: j.job_id })).status as string;

  return {
    async request(id) {
      const r = await (await api()).get(`/api/requests/${encodeURIComponent(id)}`);
      if (r.status !== 200) throw apiError(r);
      return r.body.request as RequestView;
    },
    async respond(req, answer, confirmed) {
      const r = await (await api()).post(`/api/requests/${encodeURIComponent(req.request_id)}/respond`, { ...answer, channel: 'cli', ...(confirmed ? { confirmation: 'tty' } : {}) });
      if (r.status !== 200) throw apiError(r);
      const q = r.body.request as RequestView;
      return `${q.request_id}: ${q.decision ?? JSON.stringify(q.answer)} — "${req.title}" has the answer`;
    },
    async message(j, text) {
      const r = await call('message_agent', { job_id: j.job_id, text });
      if (r.delivered) return `message delivered to ${short(j)}`;
      const st = await statusOf(j);
      return ENDED.has(st) ? `${short(j)} has ended (${st}): the message waits for a resume (u)` : `message stored for ${short(j)}: it reads it on its next turn`;
    },
    async pause(j, mode) {
      const r = await call('pause_agent', { job_id: j.job_id, mode });
      return mode === 'freeze' ? `${short(j)} ${r.status} (u resumes it)` : `${short(j)} stopped, session kept: ${r.status} (u resumes it)`;
    },
    async resume(j) {
      const r = await call('resume_agent', { job_id: j.job_id });
      return `${short(j)} ${r.status}`;
    },
    async cancel(j) {
      const before = await statusOf(j);
      if (ENDED.has(before)) return `job ${j.job_id} ended meanwhile (${before}): nothing to cancel`;
      const r = await call('cancel_agent', { job_id: j.job_id, cascade: true, reason: 'cancelled by the person from overseer watch' });
      if (r.status !== 'cancelled') return `job ${j.job_id} ended (${r.status}) before the cancel reached it: nothing cancelled`;
      return `${short(j)} cancelled`;
    },
    async cancelRun(r) {
      const v = await call('cancel_run', { run_id: r.run_id, reason: 'cancelled by the person from overseer watch' });
      return `run "${r.title}" (${r.run_id}) ${v.status}`;
    },
    async pauseRun(r, paused) {
      const v = await call('pause_run', { run_id: r.run_id, paused });
      return v.paused ? `run "${r.title}" (${r.run_id}) paused: no new call starts (u unpauses)` : `run "${r.title}" (${r.run_id}) unpaused: calls start again`;
    },
    async cancelCall(r, seq) {
      const v = await call('cancel_run', { run_id: r.run_id, call: seq, reason: 'cancelled by the person from overseer watch' });
      const c = (v.calls as { seq: number; status: string; job_status: string | null }[] | undefined)?.find((x) => x.seq === seq);
      return `call #${seq} of run ${r.run_id} cancelled${c ? ` (${c.job_status ?? c.status})` : ''}; the run goes on (${v.status})`;
    },
    async ship(j) {
      const r = await (await api()).post(`/api/floor/ready/${encodeURIComponent(j.job_id)}/ship`, {});
      if (r.status !== 200) throw apiError(r);
      const m = r.body as { merged: boolean; message: string };
      if (!m.merged) throw new Error(`not shipped: ${m.message.split('\n').join(' ')}`);
      return `shipped ${short(j)}: ${m.message}`;
    },
    async dismiss(j) {
      const r = await (await api()).post(`/api/floor/ready/${encodeURIComponent(j.job_id)}/dismiss`, {});
      if (r.status !== 200) throw apiError(r);
      return (r.body as { message: string }).message;
    },
    async sendBack(j) {
      const r = await (await api()).post(`/api/floor/ready/${encodeURIComponent(j.job_id)}/send-back`, {});
      if (r.status !== 200) throw apiError(r);
      return `${short(j)}: ${(r.body as { message: string }).message}`;
    },
    async close() {
      const t = tools;
      tools = undefined;
      if (t) await (await t.catch(() => undefined))?.close();
    },
  };
}

/** No hub: every action says it needs one, and how to get one. */
export function noHubCrew(home: string): Crew {
  const no = async (): Promise<never> => {
    throw new Error(`actions need a running hub; none runs for ${home} (start your lead's Claude Code, or overseer serve)`);
  };
  return { request: no, respond: no, message: no, pause: no, resume: no, cancel: no, cancelRun: no, pauseRun: no, cancelCall: no, ship: no, dismiss: no, sendBack: no, close: async () => undefined };
}
