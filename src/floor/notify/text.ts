// The human-readable forms of a payload: the desktop notification's title and body, and the
// one-line Slack message. Pure.
import type { NotifyPayload } from './payload.js';
import type { NotifyEvent } from '../../config/notify.js';

const LABEL: Record<NotifyEvent, string> = {
  needs_input: 'needs input',
  failed: 'failed',
  succeeded: 'succeeded',
  workflow_blocked: 'workflow blocked',
  workflow_done: 'workflow done',
  stalled: 'stalled',
  budget_high: 'budget nearly spent',
  warning: 'warning',
  limited: 'held by a provider limit',
};

/** "needs input", "workflow blocked", … */
export const eventLabel = (e: NotifyEvent): string => LABEL[e];

const subject = (p: NotifyPayload): string => {
  if (p.event === 'limited') return p.title;
  const id = p.event.startsWith('workflow_') ? p.workflow_id : p.job_id;
  return id ? `${p.title} (${id})` : p.title;
};

const held = (p: NotifyPayload): string => (p.suppressed ? ` [${p.suppressed} earlier notification${p.suppressed === 1 ? '' : 's'} held back]` : '');

/** Title and body of a desktop notification. */
export function desktopText(p: NotifyPayload): { title: string; body: string } {
  return {
    title: `Overseer ${p.project}: ${subject(p)} ${eventLabel(p.event)}`,
    body: `${p.reason}\n${p.command}${held(p)}`,
  };
}

/** Slack mrkdwn needs &, < and > escaped (they introduce links and mentions). */
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** One readable line: project, who, what, why, and the command in backticks. */
export function slackText(p: NotifyPayload): string {
  const command = p.command.replace(/`/g, "'");
  return `*${esc(p.project)}*: ${esc(subject(p))} ${eventLabel(p.event)} — ${esc(p.reason)}. Run \`${esc(command)}\`${esc(held(p))}`;
}
