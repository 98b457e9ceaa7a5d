// `overseer watch`: the live floor with a cursor, and the screens the keys open (help, a text
// prompt, a y/n confirmation, a job's log, a job's diff). State lives here; what the rows are,
// where the selection goes and what a key means are the pure modules rows.ts and keys.ts.
// An action always carries the ids of the row that was shown selected when its key was
// pressed (and a confirmation the ids it showed), never an index into a list that may have
// changed since.
import { useEffect, useMemo, useRef, useState } from 'react';
import { Text, useApp, useInput, useStdout, type Key } from 'ink';
import type { Floor, FloorBrief, FloorJob } from '../floor/types.js';
import { SECONDS_SHOWN_MS, wrapText } from './format.js';
import type { FeedHandlers } from './feed.js';
import { closedLine, type Crew } from './crew.js';
import type { LogSource } from './jobLog.js';
import type { JobDiff } from './diff.js';
import { buildRows, filterText, isEmptyFilter, move, NO_FILTER, NO_SELECTION, parseFilter, reconcile, selectedRow, type Filter, type Selection, type ViewRow } from './rows.js';
import { guard, keyAction, type Action, type JobRef, type RequestRef } from './keys.js';
import { allLines, scrollTop } from './screen.js';
import { Help, ListScreen, Pager, StatusBar, type Status } from './components.js';

export interface AppProps {
  /** Starts the floor feed (src/tui/feed.ts), returns its stop. */
  feed: (h: FeedHandlers) => { stop: () => void };
  crew: Crew;
  openLog: (jobId: string) => Promise<LogSource>;
  openDiff: (jobId: string) => Promise<JobDiff>;
  /**
   * Take over an agent (`t`): attach_agent through the hub while the screen is up (a refusal
   * rejects, and its message is the status line); resolves with the person's part, which
   * `leave` runs once the screen is gone (src/tui/run.tsx).
   */
  takeOver: (jobId: string) => Promise<() => Promise<string>>;
  /** Leave the screen to run `handOver` on this terminal; the watch comes back with `kept`. */
  leave: (kept: Kept, handOver: () => Promise<string>) => void;
  /** The view to come back to (after a takeover), with the line saying how it ended. */
  kept?: Kept & { status: Status };
  clock?: () => number;
}

/** What the watch keeps while it is away: the view (floor, rows, selection, filter, expanded runs), the scroll and the source. */
export interface Kept { view: View; top: number; source: string }

type Mode =
  | { kind: 'list' }
  | { kind: 'help' }
  | { kind: 'prompt'; label: string; initial: string; submit: (text: string) => void }
  | { kind: 'confirm'; yes: () => void; no: string }
  | { kind: 'log'; job: JobRef }
  | { kind: 'diff'; job: JobRef }
  | { kind: 'brief' };

export interface View {
  floor: Floor | null;
  rows: ViewRow[];
  sel: Selection;
  filter: Filter;
  showLocks: boolean;
  /** Script runs shown with their calls and log. */
  expanded: ReadonlySet<string>;
}

const HINT = '? keys · ↑↓ select · a/r approve/reject · s ship · x dismiss · t take over · i brief · m msg · p pause · c cancel · f log · d diff · enter expand a run · / filter · q quit';
/** How long a result stays in the status bar. */
const STATUS_MS = 10_000;

/** The terminal's size, following resizes. */
function useSize(): { width: number; height: number } {
  const { stdout } = useStdout();
  const read = (): { width: number; height: number } => ({ width: stdout.columns || 80, height: stdout.rows || 24 });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const on = (): void => setSize(read());
    stdout.on('resize', on);
    return () => { stdout.off('resize', on); };
  }, [stdout]);
  return size;
}

export function App({ feed, crew, openLog, openDiff, takeOver, leave, kept, clock = Date.now }: AppProps): React.JSX.Element {
  const { exit } = useApp();
  const { width, height } = useSize();
  const [view, setView] = useState<View>(kept?.view ?? { floor: null, rows: [], sel: NO_SELECTION, filter: NO_FILTER, showLocks: false, expanded: new Set() });
  const [source, setSource] = useState(kept?.source ?? 'connecting…');
  const [mode, setMode] = useState<Mode>({ kind: 'list' });
  const [status, setStatus] = useState<Status | null>(kept?.status ?? null);
  const [now, setNow] = useState(clock);
  const top = useRef(kept?.top ?? 0);
  // The view as last rendered, for what outlives a render (the takeover leaves with it).
  const current = useRef(view);
  current.current = view;

  // Floors in: the rows are rebuilt and the selection reconciled in one state update.
  useEffect(() => {
    const f = feed({
      floor: (floor) => setView((v) => {
        const rows = buildRows(floor, { filter: v.filter, showLocks: v.showLocks, expanded: v.expanded });
        return { ...v, floor, rows, sel: reconcile(v.rows, rows, v.sel, clock()) };
      }),
      state: (src, note) => {
        setSource(src === 'hub' ? 'hub' : src === 'database' ? 'database (read-only)' : 'no hub, no database');
        if (note) setStatus({ text: note, tone: 'error' });
      },
    });
    return () => f.stop();
  }, [feed]);

  // The clock: every second while something shows seconds ticking (a young running job, lock
  // expiry times), else every 30 s (uptime, minutes).
  const ticking = !!view.floor && (view.showLocks || showsSeconds(view.floor.running, now));
  useEffect(() => {
    setNow(clock());
    const t = setInterval(() => setNow(clock()), ticking ? 1000 : 30_000);
    return () => clearInterval(t);
  }, [ticking]);

  useEffect(() => {
    if (!status || status.tone === 'ask') return;
    const t = setTimeout(() => setStatus((s) => (s === status ? null : s)), STATUS_MS);
    return () => clearTimeout(t);
  }, [status]);

  useEffect(() => () => { void crew.close(); }, [crew]);

  const relist = (change: Partial<Pick<View, 'filter' | 'showLocks' | 'expanded'>>): void => setView((v) => {
    const next = { ...v, ...change };
    const rows = next.floor ? buildRows(next.floor, { filter: next.filter, showLocks: next.showLocks, expanded: next.expanded }) : [];
    return { ...next, rows, sel: reconcile(v.rows, rows, v.sel, clock()) };
  });

  /** Runs an action; its result or error goes to the status bar. */
  const run = (doing: string, p: () => Promise<string>): void => {
    setStatus({ text: `${doing}…`, tone: 'info' });
    p().then((text) => setStatus({ text, tone: 'ok' }), (err: unknown) => setStatus({ text: (err as Error).message, tone: 'error' }));
  };

  /** Answers a request: still open? for the person only? (then y/n first) — then the answer. */
  const respond = (req: RequestRef, answer: { decision?: 'approved' | 'rejected'; answer?: string }, what: string): void => {
    setStatus({ text: `${what} ${req.request_id}…`, tone: 'info' });
    crew.request(req.request_id).then((q) => {
      if (q.status !== 'pending') return setStatus({ text: closedLine(q), tone: 'error' });
      if (q.who !== 'person') return run(`${what} ${req.request_id}`, () => crew.respond(req, answer, false));
      setStatus({ text: `${req.request_id} is for the person only: ${what} it as the person? y/n`, tone: 'ask' });
      setMode({ kind: 'confirm', no: `not answered: ${req.request_id} is still pending`, yes: () => run(`${what} ${req.request_id}`, () => crew.respond(req, answer, true)) });
    }, (err: unknown) => setStatus({ text: (err as Error).message, tone: 'error' }));
  };

  const perform = (a: Action): void => {
    switch (a.kind) {
      case 'quit': return exit();
      case 'move': return setView((v) => ({ ...v, sel: move(v.rows, v.sel, a.delta) }));
      case 'page': return setView((v) => ({ ...v, sel: move(v.rows, v.sel, a.dir * Math.max(1, Math.floor(bodyHeight / 2))) }));
      case 'help': return setMode({ kind: 'help' });
      case 'toggle_locks': return relist({ showLocks: !view.showLocks });
      case 'brief':
        if (!view.floor?.brief) return setStatus({ text: 'no crew brief: the lead sets one (set_brief), or you with overseer brief set <text|@file>', tone: 'info' });
        return setMode({ kind: 'brief' });
      case 'filter':
        return setMode({ kind: 'prompt', label: 'filter (words, label:x, status:y): ', initial: filterText(view.filter), submit: (t) => relist({ filter: parseFilter(t) }) });
      case 'clear_filter':
        if (!isEmptyFilter(view.filter)) relist({ filter: NO_FILTER });
        return setStatus(null);
      case 'approve': return respond(a.req, { decision: 'approved' }, 'approving');
      case 'reject': return respond(a.req, { decision: 'rejected' }, 'rejecting');
      case 'answer':
        return setMode({ kind: 'prompt', label: `answer to ${a.req.request_id} ("${a.req.title}"): `, initial: '', submit: (t) => respond(a.req, { answer: t }, 'answering') });
      case 'message':
        return setMode({ kind: 'prompt', label: `message to "${a.job.title}" (${a.job.job_id}): `, initial: '', submit: (t) => run(`messaging ${a.job.job_id}`, () => crew.message(a.job, t)) });
      case 'pause': return run(`freezing ${a.job.job_id}`, () => crew.pause(a.job, 'freeze'));
      case 'stop': return run(`stopping ${a.job.job_id}`, () => crew.pause(a.job, 'stop'));
      case 'resume': return run(`resuming ${a.job.job_id}`, () => crew.resume(a.job));
      case 'cancel':
        setStatus({ text: `cancel "${a.job.title}" (${a.job.job_id}) and its sub-agents? y/n`, tone: 'ask' });
        return setMode({ kind: 'confirm', no: `not cancelled: ${a.job.job_id}`, yes: () => run(`cancelling ${a.job.job_id}`, () => crew.cancel(a.job)) });
      case 'expand': {
        const expanded = new Set(view.expanded);
        if (!expanded.delete(a.run.run_id)) expanded.add(a.run.run_id);
        return relist({ expanded });
      }
      case 'run_pause': return run(`${a.paused ? 'pausing' : 'unpausing'} run ${a.run.run_id}`, () => crew.pauseRun(a.run, a.paused));
      case 'run_cancel':
        setStatus({ text: `cancel run "${a.run.title}" (${a.run.run_id}) and its running agents? y/n`, tone: 'ask' });
        return setMode({ kind: 'confirm', no: `not cancelled: run ${a.run.run_id}`, yes: () => run(`cancelling run ${a.run.run_id}`, () => crew.cancelRun(a.run)) });
      case 'call_cancel':
        setStatus({ text: `cancel ${a.what} of run ${a.run.run_id}? The script sees it fail with code "cancelled". y/n`, tone: 'ask' });
        return setMode({ kind: 'confirm', no: `not cancelled: ${a.what}`, yes: () => run(`cancelling ${a.what}`, () => crew.cancelCall(a.run, a.seq)) });
      case 'ship':
        setStatus({ text: `ship "${a.job.title}" (${a.job.job_id}) through the merge queue? y/n — merges ${a.branch}, its checks run on the result`, tone: 'ask' });
        return setMode({ kind: 'confirm', no: `not shipped: ${a.job.job_id}`, yes: () => run(`shipping ${a.job.job_id}`, () => crew.ship(a.job)) });
      case 'dismiss':
        setStatus({ text: `dismiss "${a.job.title}" (${a.job.job_id}) from READY TO SHIP? y/n — its branch ${a.branch} is kept`, tone: 'ask' });
        return setMode({ kind: 'confirm', no: `not dismissed: ${a.job.job_id}`, yes: () => run(`dismissing ${a.job.job_id}`, () => crew.dismiss(a.job)) });
      case 'send_back':
        setStatus({ text: `send "${a.job.title}" (${a.job.job_id}) back to its agent with its failed merge? y/n — ${a.branch} is merged again when it finishes`, tone: 'ask' });
        return setMode({ kind: 'confirm', no: `not sent back: ${a.job.job_id}`, yes: () => run(`sending back ${a.job.job_id}`, () => crew.sendBack(a.job)) });
      case 'attach':
        setStatus({ text: `taking over "${a.job.title}" (${a.job.job_id})…`, tone: 'info' });
        return void takeOver(a.job.job_id).then(
          (handOver) => leave({ view: current.current, top: top.current, source }, handOver),
          (err: unknown) => setStatus({ text: `not taken over: ${(err as Error).message}`, tone: 'error' }),
        );
      case 'follow': return setMode({ kind: 'log', job: a.job });
      case 'diff': return setMode({ kind: 'diff', job: a.job });
      case 'refuse': return setStatus({ text: a.message, tone: 'error' });
      case 'none': return;
    }
  };

  // The header is two lines, three with a crew brief.
  const bodyHeight = Math.max(3, height - 4 - (view.floor?.brief ? 1 : 0));
  // Keys typed faster than a frame arrive in one chunk ("ja"): they are queued and taken one
  // per render, so each key acts on the screen as the key before it left it.
  const keys = useRef<{ input: string; key: Key }[]>([]);
  const [, setKeyTick] = useState(0);
  useInput((input: string, key: Key) => {
    const plain = input.length > 1 && !key.ctrl && !key.meta && !key.escape && !key.return;
    for (const ch of plain ? [...input] : [input]) keys.current.push({ input: ch, key: plain ? { ...key } : key });
    setKeyTick((n) => n + 1);
  }, { isActive: mode.kind === 'list' });
  useEffect(() => {
    const next = keys.current.shift();
    if (!next) return;
    if (mode.kind !== 'list') { keys.current = []; return; } // a screen opened: the rest is not for the list
    perform(guard(keyAction(next.input, next.key, selectedRow(view.rows, view.sel)), view.sel, clock()));
    if (keys.current.length) setKeyTick((n) => n + 1);
  });

  const lines = useMemo(() => allLines(view.rows, now, width, view.sel.key), [view.rows, now, width, view.sel.key]);
  top.current = scrollTop(lines, view.sel.key, bodyHeight, top.current);
  const back = (): void => setMode({ kind: 'list' });

  if (mode.kind === 'help') return <HelpScreen height={height - 1} onBack={back} />;
  if (mode.kind === 'log') return <LogScreen job={mode.job} open={openLog} height={height} onBack={back} />;
  if (mode.kind === 'diff') return <DiffScreen job={mode.job} open={openDiff} height={height} onBack={back} />;
  if (mode.kind === 'brief') return <BriefScreen brief={view.floor?.brief ?? null} width={width} height={height} onBack={back} />;

  const filtered = isEmptyFilter(view.filter) ? '' : `filter: ${filterText(view.filter)} (Esc clears) · `;
  const empty = !view.floor || view.rows.length ? null
    : isEmptyFilter(view.filter) ? 'No agents yet: the lead spawns them (or overseer spawn).' : 'Nothing matches the filter (Esc clears it).';
  const footer = mode.kind === 'prompt'
    ? <Prompt label={mode.label} initial={mode.initial} onSubmit={(t) => { back(); mode.submit(t); }} onCancel={back} />
    : mode.kind === 'confirm'
      ? <Confirm status={status} onAnswer={(yes) => { back(); if (yes) mode.yes(); else setStatus({ text: mode.no, tone: 'info' }); }} />
      : <StatusBar status={status} hint={`${filtered}${HINT}`} />;
  return <ListScreen floor={view.floor} source={source} now={now} width={width} lines={lines} top={top.current} bodyHeight={bodyHeight} selKey={view.sel.key} empty={empty} footer={footer} />;
}

/** Does a running job in this tree show its elapsed time with seconds? */
function showsSeconds(jobs: readonly FloorJob[], now: number): boolean {
  return jobs.some((j) => (j.started_at !== null && j.ended_at === null && now - j.started_at < SECONDS_SHOWN_MS) || showsSeconds(j.children, now));
}

/** A one-line text input: typing edits, enter submits, Esc cancels. */
function Prompt({ label, initial, onSubmit, onCancel }: { label: string; initial: string; onSubmit: (t: string) => void; onCancel: () => void }): React.JSX.Element {
  const [value, setValue] = useState(initial);
  useInput((input, key) => {
    if (key.escape) return onCancel();
    if (key.return) return onSubmit(value);
    if (key.backspace || key.delete) return setValue((v) => [...v].slice(0, -1).join(''));
    if (key.ctrl && input === 'u') return setValue('');
    if (!key.ctrl && !key.meta && input) setValue((v) => v + input.replace(/[\r\n]+/g, ' '));
  });
  return <Text wrap="truncate-start" color="yellow">{label}{value}▏</Text>;
}

/** The y/n line under a question shown in the status bar. */
function Confirm({ status, onAnswer }: { status: Status | null; onAnswer: (yes: boolean) => void }): React.JSX.Element {
  useInput((input) => onAnswer(input === 'y' || input === 'Y'));
  return <Text wrap="truncate-end" color="yellow">{status?.text ?? 'y/n'}</Text>;
}

function HelpScreen({ height, onBack }: { height: number; onBack: () => void }): React.JSX.Element {
  useInput(() => onBack());
  return <Help height={height} />;
}

/** Scroll keys of the pagers; returns the new top (Infinity: the end, i.e. follow). */
function scroll(input: string, key: Key, top: number, page: number): number | undefined {
  if (key.upArrow || input === 'k') return Math.max(0, top - 1);
  if (key.downArrow || input === 'j') return top + 1;
  if (key.pageUp) return Math.max(0, top - page);
  if (key.pageDown || input === ' ') return top + page;
  if (key.home || input === 'g') return 0;
  if (key.end || input === 'G') return Infinity;
  return undefined;
}

/** Most lines a log view keeps. */
const LOG_KEEP = 5000;

/** A job's log, followed every 250 ms; scrolling up stops following, G (End) follows again. */
function LogScreen({ job, open, height, onBack }: { job: JobRef; open: (id: string) => Promise<LogSource>; height: number; onBack: () => void }): React.JSX.Element {
  const [lines, setLines] = useState<string[]>([]);
  const [ended, setEnded] = useState(false);
  const [top, setTop] = useState(Infinity);
  const page = Math.max(3, height - 3);
  useEffect(() => {
    let src: LogSource | undefined;
    let t: NodeJS.Timeout | undefined;
    let live = true;
    let polling = false;
    // One poll at a time (a slow read skips a tick); a poll that fails after the view closed is dropped.
    const pull = (): void => {
      if (!src || polling) return;
      const from = src;
      polling = true;
      from.poll().then((more) => {
        if (!live) return;
        if (more.length) setLines((l) => (l.length + more.length > LOG_KEEP ? [...l, ...more].slice(-LOG_KEEP) : [...l, ...more]));
        if (from.ended) {
          setEnded(true);
          clearInterval(t);
        }
      }, (err: unknown) => {
        if (!live) return;
        setLines((l) => [...l, `(the log could not be read: ${(err as Error).message})`]);
        setEnded(true);
        clearInterval(t);
      }).finally(() => { polling = false; });
    };
    open(job.job_id).then((s) => {
      if (!live) { void s.close().catch(() => undefined); return; }
      src = s;
      t = setInterval(pull, 250);
      pull();
    }, (err: unknown) => {
      if (!live) return;
      setLines([(err as Error).message]);
      setEnded(true);
    });
    return () => { live = false; clearInterval(t); void src?.close().catch(() => undefined); };
  }, [job.job_id]);
  const maxTop = Math.max(0, lines.length - page);
  const shownTop = Math.min(top, maxTop);
  useInput((input, key) => {
    if (input === 'q' || key.escape) return onBack();
    const to = scroll(input, key, shownTop, page);
    if (to !== undefined) setTop(to >= maxTop ? Infinity : to);
  });
  const state = ended ? 'ended' : top === Infinity ? 'following' : 'paused (G follows)';
  return <Pager title={`log of "${job.title}" (${job.job_id}) · ${state}`} lines={lines} top={shownTop} height={page} footer="q/Esc back · ↑↓ PgUp PgDn scroll · G follow" />;
}

/** The crew brief whole, as it is now (a change on the floor shows here too; cleared: it says so). */
function BriefScreen({ brief, width, height, onBack }: { brief: FloorBrief | null; width: number; height: number; onBack: () => void }): React.JSX.Element {
  const [top, setTop] = useState(0);
  const page = Math.max(3, height - 3);
  const lines = brief ? wrapText(brief.text, Math.max(10, width)) : ['(the crew brief was cleared)'];
  const maxTop = Math.max(0, lines.length - page);
  useInput((input, key) => {
    if (input === 'q' || key.escape || input === 'i') return onBack();
    const to = scroll(input, key, Math.min(top, maxTop), page);
    if (to !== undefined) setTop(Math.min(to, maxTop));
  });
  const title = brief ? `crew brief v${brief.version} · set by ${brief.set_by === 'lead' ? 'the lead' : 'the person'} at ${new Date(brief.set_at).toLocaleString()}` : 'crew brief: none';
  return <Pager title={title} lines={lines} top={Math.min(top, maxTop)} height={page} footer="q/Esc back · ↑↓ PgUp PgDn scroll · the lead sets it (set_brief), you with overseer brief set" />;
}

/** A job's diff against the commit it started from. */
function DiffScreen({ job, open, height, onBack }: { job: JobRef; open: (id: string) => Promise<JobDiff>; height: number; onBack: () => void }): React.JSX.Element {
  const [diff, setDiff] = useState<JobDiff | null>(null);
  const [top, setTop] = useState(0);
  const page = Math.max(3, height - 3);
  useEffect(() => {
    let live = true;
    open(job.job_id).then((d) => { if (live) setDiff(d); }, (err: unknown) => { if (live) setDiff({ title: (err as Error).message, lines: [] }); });
    return () => { live = false; };
  }, [job.job_id]);
  const lines = diff?.lines ?? [];
  const maxTop = Math.max(0, lines.length - page);
  useInput((input, key) => {
    if (input === 'q' || key.escape) return onBack();
    const to = scroll(input, key, Math.min(top, maxTop), page);
    if (to !== undefined) setTop(Math.min(to, maxTop));
  });
  const title = diff ? `diff of "${job.title}" (${job.job_id}): ${diff.title}` : `diff of "${job.title}" (${job.job_id}): reading…`;
  return <Pager title={title} lines={lines} top={Math.min(top, maxTop)} height={page} footer={`q/Esc back · ↑↓ PgUp PgDn scroll · ${lines.length} lines`} colorDiff />;
}
