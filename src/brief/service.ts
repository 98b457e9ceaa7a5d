// The crew brief (issue 31 point 6, docs/floor.md "The crew brief"): one standing text the lead
// (set_brief) or the person (`overseer brief`, the dashboard) sets. A new agent reads it in its
// first prompt (src/services/runner.ts reads the row at launch); every agent running when it
// changes gets it once, as a message from the lead. Messages go through MessageService.deliver: a
// job another hub runs gets it stored undelivered, and its hub pushes it when it hears the
// `message` event (docs/store-plan.md §3.5) — so a brief set on hub 2 reaches hub 1's children.
import type { HubContext, Caller } from '../services/context.js';
import { ForbiddenError, InvalidInputError } from '../errors.js';
import { isoTime } from '../clock.js';
import { jobsByStatus } from '../store/sql/jobs.js';
import { SetBriefInput, type BriefChange, type BriefSetter, type BriefView } from '../contract/brief.js';
import { readBrief, writeBrief, type BriefRow } from './store.js';

/** What the brief needs of the messages (src/services/messages.ts). */
export interface BriefMessages {
  deliver(from: string, to: string, text: string): Promise<{ message_id: number; delivered: boolean }>;
}

const WHO: Readonly<Record<BriefSetter, string>> = { lead: 'the lead', person: 'the person running the crew' };

export const briefView = (r: BriefRow | undefined): BriefView => r?.text
  ? { text: r.text, set_by: r.set_by as BriefSetter, set_at: isoTime(r.set_at), version: r.version }
  : { text: null, set_by: (r?.set_by as BriefSetter | undefined) ?? null, set_at: r ? isoTime(r.set_at) : null, version: r?.version ?? 0 };

/** The brief as a first-prompt section (prompts/brief.md), or undefined when there is none. */
export function briefSection(ctx: Pick<HubContext, 'prompts'>, r: BriefRow | undefined): string | undefined {
  if (!r?.text) return undefined;
  return ctx.prompts.render('brief', { text: r.text, set_by: WHO[r.set_by as BriefSetter] ?? r.set_by });
}

export class BriefService {
  constructor(private readonly ctx: HubContext, private readonly messages: BriefMessages) {}

  async get(): Promise<BriefView> {
    return briefView(await readBrief(this.ctx.sql.db));
  }

  /** Set the brief (validated by the contract's schema: nothing changes on bad input) and send it to the running agents. */
  async set(input: unknown, by: BriefSetter, caller: Caller): Promise<BriefChange> {
    this.refuseAgents(caller);
    const parsed = SetBriefInput.safeParse(input);
    if (!parsed.success) throw new InvalidInputError(parsed.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ` : '') + i.message).join('; '));
    const row = await writeBrief(this.ctx.sql.db, parsed.data.text, by, this.ctx.clock.now());
    this.ctx.bus.emit('brief', { version: row.version }); // the floor shows it (watch's top line, the dashboard)
    const sent = await this.tellRunning(this.ctx.prompts.render('brief-changed', { text: parsed.data.text, set_by: WHO[by] }));
    return { ...briefView(row), sent_to: sent };
  }

  /** Clear the brief: new agents get none; running agents are told once. Clearing no brief changes nothing. */
  async clear(by: BriefSetter, caller: Caller): Promise<BriefChange> {
    this.refuseAgents(caller);
    const before = await readBrief(this.ctx.sql.db);
    if (!before?.text) return { ...briefView(before), sent_to: [] };
    const row = await writeBrief(this.ctx.sql.db, null, by, this.ctx.clock.now());
    this.ctx.bus.emit('brief', { version: row.version });
    const sent = await this.tellRunning(this.ctx.prompts.render('brief-cleared', { set_by: WHO[by] }));
    return { ...briefView(row), sent_to: sent };
  }

  private refuseAgents(caller: Caller): void {
    if (caller.role !== 'lead') throw new ForbiddenError('only the lead or the person sets the crew brief: an agent cannot change it. Tell the lead (send_message to "lead") what the crew should know.');
  }

  /** One message to every running agent of the crew (every hub's): the ids it went to. */
  private async tellRunning(text: string): Promise<string[]> {
    const sent: string[] = [];
    for (const j of await jobsByStatus(this.ctx.sql.db, 'running', 'needs_input')) {
      await this.messages.deliver('lead', j.id, text);
      sent.push(j.id);
    }
    return sent;
  }
}
