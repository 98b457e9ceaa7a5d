// The crew brief (issue 31 point 6): one schema for the lead's tool, the service and the floor's
// HTTP API (src/brief, docs/floor.md "The crew brief").
import { z } from 'zod';

/** The longest brief, in characters: it goes into every new agent's first prompt. */
export const BRIEF_MAX_CHARS = 8000;

export const SetBriefInput = z.object({
  text: z.string()
    .refine((t) => t.trim().length > 0, { message: 'the brief is empty: give the standing text every agent should read (to remove the brief, use clear_brief)' })
    .refine((t) => t.length <= BRIEF_MAX_CHARS, { message: `the brief is longer than ${BRIEF_MAX_CHARS} characters: shorten it (it goes into every new agent's first prompt)` })
    .describe(`The crew brief: standing instructions for every agent (1..${BRIEF_MAX_CHARS} characters). Every agent spawned afterwards gets it in its first prompt; every running agent gets it once, as a message from the lead.`),
}).strict();
export type SetBriefInput = z.infer<typeof SetBriefInput>;

export const GetBriefInput = z.object({}).strict();
export const ClearBriefInput = z.object({}).strict();

/** Who set the brief: the lead (its tool) or the person (`overseer brief`, the dashboard). */
export type BriefSetter = 'lead' | 'person';

export interface BriefView {
  /** null: no brief (never set, or cleared). */
  text: string | null;
  set_by: BriefSetter | null;
  set_at: string | null;
  /** +1 at every set or clear; 0: never set. */
  version: number;
}

export interface BriefChange extends BriefView {
  /** The running agents it was sent to as a message (a clear sends none). */
  sent_to: string[];
}
