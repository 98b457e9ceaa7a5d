// The script sandbox, the hub's side. A script runs in QuickJS compiled to WebAssembly, one
// module per run, in a worker thread of its own (src/scripts/sandboxWorker.ts), so a script
// shares no heap with the hub or another run, reaches nothing but the API of prelude.ts (no file
// system, network, process, clock or randomness), and never computes on the hub's thread: while
// one loops, the hub answers its children, MCP and the dashboard (docs/decisions.md, "Scripts run
// in a worker"). The hub answers the script's calls (agent, approve, workflow) through
// `SandboxHost`, as messages; `budget` is answered through shared memory, the script waiting on it.
// Caps per run, enforced in the worker: CPU time spent inside QuickJS and the WebAssembly heap;
// and here a backstop: a worker whose script has been inside QuickJS longer than the CPU cap plus
// a margin (a builtin that QuickJS does not interrupt) is terminated, with the same CpuLimit.
// Errors name the script's line. Why QuickJS and not isolated-vm: docs/decisions.md ("Scripts run in QuickJS").
import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { newQuickJSWASMModule, RELEASE_SYNC, type QuickJSContext, type QuickJSHandle, type QuickJSWASMModule } from 'quickjs-emscripten';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** What a script may call of the hub. A rejection reaches the script as an Error it can catch. */
/** What `budget` shows in the script. */
export interface Budget { total: number | null; spent: number; reserved: number }

export interface SandboxHost {
  /** `kind`: agent, approve, workflow — or, for a bundled script only (src/scripts/bundled.ts), one of its privileged calls. */
  call(kind: string, args: Json[]): Promise<Json>;
  log(message: string): void;
  phase(title: string): void;
  /** The run's budget as `budget` shows it: total (null: none), spent so far, and held by running calls
   * (read from the store: the worker waits for the answer, the hub's thread does not). */
  budget(): Budget | Promise<Budget>;
}

export interface SandboxLimits {
  /** CPU time the script may spend inside QuickJS over the whole run. */
  cpuMs: number;
  /** The run's WebAssembly heap (QuickJS's whole memory). */
  memoryBytes: number;
}

export const DEFAULT_LIMITS: SandboxLimits = { cpuMs: 10_000, memoryBytes: 256 << 20 };
/** Claude Code's Workflow takes scripts up to 512 KiB. */
export const MAX_SCRIPT_BYTES = 512 * 1024;

/** Where in the script something went wrong (1-based), when QuickJS said. */
export interface ScriptError { name: string; message: string; line?: number; column?: number; code?: string }

export type SandboxOutcome =
  | { status: 'returned'; value: Json | undefined; cpuMs: number }
  | { status: 'failed'; error: ScriptError; cpuMs: number };

/** An error the hub gives a call, as the script sees it (`e.name`, `e.message`, `e.code`). */
export class ScriptCallError extends Error {
  constructor(readonly errorName: string, message: string, readonly code?: string) {
    super(message);
  }
}

export const FILE = 'script.js';
const META = /^(\s*(?:\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*)export\s+const\s+meta\b/;

/** The script as QuickJS runs it: an async function body (top-level await and `return` work, as
 * in Claude Code), on the same lines as the source so that errors name the person's line. */
export function wrap(source: string): string {
  return `(async () => {${wrapMeta(source)}\n})()`;
}

/** `export const meta = …` read as `const meta = …` (same lines), so the script is a function body. */
export function wrapMeta(source: string): string {
  return source.replace(META, '$1const meta');
}

let syntaxModule: Promise<QuickJSWASMModule> | undefined;
let globals: Promise<string[]> | undefined;

/** The globals QuickJS gives every script before the prelude adds the API (Object, JSON, Math …). */
export function quickJsGlobals(): Promise<string[]> {
  globals ??= (async () => {
    syntaxModule ??= newQuickJSWASMModule(RELEASE_SYNC);
    const vm = (await syntaxModule).newContext();
    try {
      const names = vm.unwrapResult(vm.evalCode('Object.getOwnPropertyNames(globalThis).join(",")'));
      try {
        return vm.getString(names).split(',');
      } finally {
        names.dispose();
      }
    } finally {
      vm.dispose();
    }
  })();
  return globals;
}

/** Syntax check without running anything: null, or the error with its line. */
export async function checkSyntax(source: string): Promise<ScriptError | null> {
  const size = Buffer.byteLength(source, 'utf8');
  if (size > MAX_SCRIPT_BYTES) return { name: 'ScriptTooLarge', message: `the script is ${size} bytes; the limit is ${MAX_SCRIPT_BYTES} (512 KiB): move data into args` };
  // One module for every check (the hub's, kept): a fresh one per run_script cost ~100 ms of the
  // hub's thread under load, mostly GC of its 16 MB heap (bench/script-agent.ts, docs/performance.md).
  syntaxModule ??= newQuickJSWASMModule(RELEASE_SYNC);
  const vm = (await syntaxModule).newContext();
  try {
    const r = vm.evalCode(wrap(source), FILE, { compileOnly: true });
    if (r.error) {
      const e = errorOf(vm, r.error);
      r.error.dispose();
      return e;
    }
    r.value.dispose();
    return null;
  } finally {
    vm.dispose();
  }
}

/** The worker's file: the built .js next to this one, or under tsx (tests) the .ts source. */
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './sandboxWorker.ts' : './sandboxWorker.js', import.meta.url);
/** How long past its CPU cap a script may stay inside QuickJS (or go on after a cancel) before its worker is terminated. */
export const BACKSTOP_MARGIN_MS = 1_000;
const WATCH_TICK_MS = 100;

/** What the worker is started with. `shared`: see `shared()`. */
export interface WorkerStart { source: string; args: Json | undefined; limits: SandboxLimits; privileged: boolean; shared: SharedArrayBuffer }
export type FromWorker =
  | { t: 'call'; id: number; kind: string; args: Json[] }
  | { t: 'log'; text: string }
  | { t: 'phase'; text: string }
  | { t: 'budget' }
  | { t: 'done'; outcome: SandboxOutcome };
export type ToWorker =
  | { t: 'answer'; id: number; ok: true; json: string }
  | { t: 'answer'; id: number; ok: false; error: { name: string; message: string; code?: string } }
  | { t: 'abort' };

const SHARED_BYTES = 6 * 8;
/** The memory a run's worker and the hub share. i32[0]: 1 once the run is cancelled; i32[1]: the
 * budget answer's sequence number (the worker waits on it). f64[1]: CPU ms the script used in
 * finished slices; f64[2]: when the current slice started (ms since the epoch; 0: not inside
 * QuickJS); f64[3..5]: the budget's total (NaN: none), spent (NaN: the hub could not read it) and reserved. */
export function shared(buffer: SharedArrayBuffer): { i32: Int32Array; f64: Float64Array } {
  return { i32: new Int32Array(buffer, 0, 2), f64: new Float64Array(buffer) };
}

/** The script's CPU so far as the hub sees it (its backstop): finished slices (f64[1]) and the one running
 * since f64[2]. The slice's start is read ONCE: read twice, a slice ending between the two reads (the worker
 * writes 0) made it `used + now - 0` — 1.8e12 ms, a CpuLimit 210 ms into a run (seen in CI, now and then). */
export function cpuSoFar(f64: ArrayLike<number>, now: number): number {
  const start = f64[2] ?? 0;
  return (f64[1] ?? 0) + (start > 0 ? now - start : 0);
}

export const cpuLimitError = (limits: SandboxLimits): ScriptError => ({ name: 'CpuLimit', message: `the script used more than ${limits.cpuMs} ms of CPU time (an endless loop?); the cap is per run` });

function startWorker(data: WorkerStart): Worker {
  // The worker's stdout and stderr are kept from the hub's (stdout is the MCP protocol in stdio mode).
  // Nothing of the hub's command line (tsx's loader, --inspect) reaches the worker: it needs none of it.
  const opts = { workerData: data, stdout: true, stderr: true, execArgv: [] };
  if (WORKER.pathname.endsWith('.js')) return new Worker(WORKER, opts);
  // Under tsx on Node 20 a worker does not inherit tsx's loader: it registers it, then loads the .ts.
  // (Resolved here: an eval worker would resolve 'tsx' from the current directory, which a test may have changed.)
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER.href)}); })`, { ...opts, eval: true });
}

/** Runs `source` to its end (or its caps, or `signal`) with `args` and the hub's `host`, in a worker of its own.
 * `privileged`: a bundled script of the hub's (src/scripts/bundled.ts): it also gets `hub.call(kind, ...args)`. */
export async function runInSandbox(o: { source: string; args: Json | undefined; host: SandboxHost; limits?: SandboxLimits; signal?: AbortSignal; privileged?: boolean }): Promise<SandboxOutcome> {
  const limits = o.limits ?? DEFAULT_LIMITS;
  const buffer = new SharedArrayBuffer(SHARED_BYTES);
  const mem = shared(buffer);
  if (o.signal?.aborted) Atomics.store(mem.i32, 0, 1);
  const worker = startWorker({ source: o.source, args: o.args, limits, privileged: o.privileged === true, shared: buffer });
  worker.stdout.resume();
  worker.stderr.resume();
  const epoch = (): number => performance.timeOrigin + performance.now();
  const cpu = (): number => cpuSoFar(mem.f64, epoch());
  return await new Promise<SandboxOutcome>((resolve) => {
    let ended = false;
    let abortedAt: number | undefined;
    const send = (m: ToWorker): void => { if (!ended) worker.postMessage(m); };
    const end = (outcome: SandboxOutcome): void => {
      if (ended) return;
      ended = true;
      clearInterval(watch);
      o.signal?.removeEventListener('abort', abort);
      void worker.terminate();
      resolve(outcome);
    };
    const abort = (): void => { Atomics.store(mem.i32, 0, 1); abortedAt = epoch(); send({ t: 'abort' }); };
    o.signal?.addEventListener('abort', abort, { once: true });
    if (o.signal?.aborted) abortedAt = epoch();
    const watch = setInterval(() => {
      if (cpu() > limits.cpuMs + BACKSTOP_MARGIN_MS) end({ status: 'failed', error: cpuLimitError(limits), cpuMs: cpu() });
      else if (abortedAt !== undefined && epoch() - abortedAt > BACKSTOP_MARGIN_MS) end({ status: 'failed', error: { name: 'Cancelled', message: 'the run was cancelled' }, cpuMs: cpu() });
    }, WATCH_TICK_MS);
    watch.unref();
    const answerBudget = async (): Promise<void> => {
      try {
        const b = await o.host.budget();
        mem.f64[3] = b.total ?? NaN;
        mem.f64[4] = b.spent;
        mem.f64[5] = b.reserved;
      } catch {
        mem.f64[4] = NaN; // the worker throws in the script: the budget could not be read
      } finally {
        Atomics.add(mem.i32, 1, 1);
        Atomics.notify(mem.i32, 1);
      }
    };
    worker.on('message', (m: FromWorker) => {
      if (ended) return;
      if (m.t === 'done') end(m.outcome);
      else if (m.t === 'log') o.host.log(m.text);
      else if (m.t === 'phase') o.host.phase(m.text);
      else if (m.t === 'budget') void answerBudget();
      else if (m.t === 'call') {
        new Promise<Json>((r) => r(o.host.call(m.kind, m.args))).then(
          (v) => send({ t: 'answer', id: m.id, ok: true, json: JSON.stringify(v ?? null) }),
          (e: unknown) => send({ t: 'answer', id: m.id, ok: false, error: { name: e instanceof ScriptCallError ? e.errorName : 'Error', message: e instanceof Error ? e.message : String(e), ...(e instanceof ScriptCallError && e.code ? { code: e.code } : {}) } }),
        );
      }
    });
    worker.on('error', (e) => end({ status: 'failed', error: { name: 'SandboxError', message: `the script's sandbox failed: ${e.message}` }, cpuMs: cpu() }));
    worker.on('exit', (code) => end({ status: 'failed', error: { name: 'SandboxError', message: `the script's sandbox stopped (exit code ${code}) before the script ended` }, cpuMs: cpu() }));
  });
}

/** An error thrown in the script, with the script's line (QuickJS's stack: `at … (script.js:L:C)`). */
export function errorOf(vm: QuickJSContext, h: QuickJSHandle): ScriptError {
  const d = vm.dump(h) as { name?: unknown; message?: unknown; stack?: unknown; lineNumber?: unknown } | unknown;
  if (typeof d !== 'object' || d === null) return { name: 'Error', message: `the script threw ${JSON.stringify(d)}` };
  const o = d as { name?: unknown; message?: unknown; stack?: unknown; lineNumber?: unknown };
  const e: ScriptError = { name: typeof o.name === 'string' ? o.name : 'Error', message: typeof o.message === 'string' ? o.message : JSON.stringify(d) };
  const code = (o as { code?: unknown }).code;
  if (typeof code === 'string') e.code = code;
  const at = typeof o.stack === 'string' ? new RegExp(`${FILE.replace('.', '\\.')}:(\\d+):(\\d+)`).exec(o.stack) : null;
  if (at) { e.line = Number(at[1]); e.column = Number(at[2]); }
  else if (typeof o.lineNumber === 'number') e.line = o.lineNumber;
  // Line 1 carries the wrapper's `(async () => {` before the script's first character.
  if (e.line === 1 && e.column !== undefined) e.column = Math.max(1, e.column - '(async () => {'.length);
  return e;
}
