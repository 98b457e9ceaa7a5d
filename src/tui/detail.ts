// Text of READY TO SHIP rows and of the detail pane under a selected request (its summary, an
// approval's plan as labelled sections, a question's options). Pure, fitted to a width like
// format.ts.
import type { NeedsYouItem, ShipItem } from '../floor/types.js';
import { duration, fit, oneLine } from './format.js';

const CHECKS: Record<ShipItem['checks'], string> = { passed: 'checks ✓ passed', failed: 'checks ✗ FAILED', not_run: 'checks – not run' };

/** A READY TO SHIP row: title, branch, checks, age; under it the diff stat, why its checks failed, its overlaps. */
export function shipLines(s: ShipItem, w: number): { main: string; detail: string | null } {
  const role = s.role ? `  [${s.role}]` : '';
  const main = fit(`⇪ ${s.title}${role}  ⎇ ${s.branch}  ${CHECKS[s.checks]}  ended ${duration(s.age_ms)} ago  ${s.job_id}`, w);
  const bits = [
    s.diff_stat ? oneLine(s.diff_stat) : 'no diff stat',
    sendBackText(s.send_back),
    s.check_detail ? oneLine(s.check_detail) : '',
    s.overlaps.length ? `overlaps ${s.overlaps.map((o) => `${o.job_id} (${o.files.join(', ')})`).join('; ')}` : '',
  ].filter(Boolean);
  return { main, detail: fit(`  ${bits.join(' · ')}`, w) };
}

/** A row's send-back: the merge that failed and the rounds (x/max); what b does when it can. */
function sendBackText(b: ShipItem['send_back']): string {
  if (!b) return '';
  const why = b.reason === 'conflict' ? 'merge conflicted' : 'merge checks failed';
  const rounds = `sent back ${b.round}/${b.max}`;
  if (b.status === 'failed') return `${why} · ${rounds} · b sends it back`;
  if (b.status === 'asked') return `${why} · ${rounds}: the bound, the person decides${b.request_id ? ` (${b.request_id})` : ''}`;
  return `${rounds} (${b.status})`;
}

const LABEL_W = 10;

/** A section of the pane: its label on the first line, the text (or each item) under it, each fitted. */
function section(label: string, value: string | string[] | undefined, w: number): string[] {
  if (value === undefined) return [];
  const items = Array.isArray(value) ? value.map((v) => `• ${oneLine(v)}`) : value.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  return items.map((text, i) => fit(`    ${(i === 0 ? label : '').padEnd(LABEL_W)}${text}`, w));
}

/** The pane under the selected request: the whole summary when it has more than one line, the plan's sections, the options. Empty for other items. */
export function requestDetail(n: NeedsYouItem, w: number): string[] {
  if (!n.request_id) return [];
  const summary = n.summary && n.summary.trim().includes('\n') ? section('summary', n.summary, w) : [];
  const p = n.plan ?? {};
  return [
    ...summary,
    ...section('rationale', p.rationale, w),
    ...section('resources', p.resources, w),
    ...section('risks', p.risks, w),
    ...section('rollback', p.rollback, w),
    ...(n.options?.length ? [fit(`    ${'options'.padEnd(LABEL_W)}${n.options.join(' · ')}`, w)] : []),
  ];
}
