// The list screen as lines: each row's text fitted to the width (one or two lines per row),
// and the window of lines that fits the terminal with the selected row inside it. Pure.
import { BLOCK_TITLE, type ViewRow } from './rows.js';
import { requestDetail, shipLines } from './detail.js';
import { doneLines, fit, lockLine, needLine, queuedLines, runCallLine, runLine, runLogLine, runningLines, workflowLine } from './format.js';

/** How a line is drawn (the component maps tones to colours). */
export type Tone = 'heading' | 'need' | 'text' | 'dim' | 'warn' | 'bad' | 'good';

export interface Line {
  /** The row this line belongs to (its key), for the cursor. */
  key: string;
  text: string;
  tone: Tone;
}

/** Width the cursor column takes in front of every line ("▶ " or two spaces). */
export const GUTTER = 2;

function jobTone(status: string): Tone {
  if (status === 'failed' || status === 'interrupted') return 'bad';
  if (status === 'cancelled') return 'dim';
  if (status === 'succeeded') return 'good';
  if (status === 'frozen' || status === 'needs_input') return 'warn';
  return 'text';
}

/** The lines of one row at `width` columns (the gutter excluded); `selected`: a request shows its detail pane under it. */
export function rowLines(r: ViewRow, now: number, width: number, selected = false): Line[] {
  const line = (text: string, tone: Tone): Line => ({ key: r.key, text, tone });
  switch (r.kind) {
    case 'heading':
      return [line(fit(`${BLOCK_TITLE[r.block]} (${r.count})`, width), 'heading')];
    case 'need':
      return [line(needLine(r.need, width), 'need'), ...(selected ? requestDetail(r.need, width).map((t) => line(t, 'text')) : [])];
    case 'ship': {
      const l = shipLines(r.item, width);
      const tone: Tone = r.item.checks === 'failed' ? 'bad' : r.item.overlaps.length ? 'warn' : 'good';
      return l.detail ? [line(l.main, tone), line(l.detail, r.item.checks === 'failed' ? 'bad' : 'dim')] : [line(l.main, tone)];
    }
    case 'workflow':
      return [line(workflowLine(r.workflow, width), r.workflow.status === 'blocked' ? 'warn' : 'text')];
    case 'run': {
      const tone: Tone = r.run.status === 'failed' ? 'bad' : r.run.status === 'cancelled' ? 'dim' : r.run.status === 'succeeded' ? 'good' : r.run.paused || r.run.waiting_request ? 'warn' : 'text';
      return [line(runLine(r.run, r.expanded, width), tone)];
    }
    case 'call':
      return [line(runCallLine(r.call, width), r.call.status === 'failed' ? 'bad' : r.call.status === 'running' ? 'text' : 'dim')];
    case 'runlog':
      return [line(runLogLine(r.line, width), 'dim')];
    case 'lock':
      return [line(lockLine(r.lock, now, width), 'dim')];
    case 'limit':
      return [line(fit(`⏸ ${r.limit.line}${r.limit.reason ? ` · ${r.limit.reason}` : ''}`, width), 'warn')];
    case 'job': {
      const j = r.job;
      const l = r.block === 'running' ? runningLines(j, now, width, r.host) : r.block === 'queued' ? queuedLines(j, width, r.host) : doneLines(j, width, r.host);
      const tone = r.block === 'queued' ? 'dim' : jobTone(j.status);
      const detailTone: Tone = j.warnings.length || j.lock_waits.length ? 'warn' : 'dim';
      return l.detail ? [line(l.main, tone), line(l.detail, detailTone)] : [line(l.main, tone)];
    }
  }
}

/** Every row's lines, in order; the selected request (`selKey`) with its detail pane. */
export function allLines(rows: readonly ViewRow[], now: number, width: number, selKey: string | null = null): Line[] {
  return rows.flatMap((r) => rowLines(r, now, width - GUTTER, r.key === selKey));
}

/**
 * The first line to show so that the selected row's lines fit in `height` lines: `prevTop`
 * when the selection is already inside that window (the screen does not jump), else the least
 * scroll that brings it in. Headings just above the selection come along when they fit.
 */
export function scrollTop(lines: readonly Line[], selKey: string | null, height: number, prevTop: number): number {
  const maxTop = Math.max(0, lines.length - height);
  const top = Math.min(Math.max(0, prevTop), maxTop);
  if (selKey === null) return top;
  const first = lines.findIndex((l) => l.key === selKey);
  if (first < 0) return top;
  let last = first;
  while (lines[last + 1]?.key === selKey) last++;
  // The heading of the selection's block, when it sits right above it.
  const lead = lines[first - 1]?.key.startsWith('heading:') ? first - 1 : first;
  if (first >= top && last < top + height) return top;
  if (first < top) return Math.max(0, lead);
  return Math.min(maxTop, last - height + 1);
}
