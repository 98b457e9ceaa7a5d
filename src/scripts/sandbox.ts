// A script runs here: QuickJS compiled to WebAssembly (quickjs-emscripten), one WebAssembly
// module per run, so a script shares no heap with the hub or another run and reaches nothing but
// the API of prelude.ts: no file system, network, process, clock or randomness. The hub answers
// its calls (agent, approve, workflow) through `SandboxHost`; the script's promises are settled
// from here and its jobs pumped after each answer. Caps per run: CPU time spent inside QuickJS (an
// infinite loop) and the WebAssembly heap (a runaway allocation: QuickJS's own malloc limit did
// not stop one in 17 s, the heap check stops it at the cap; docs/decisions.md). Errors name the
// script's line. Why QuickJS and not isolated-vm: docs/decisions.md ("Scripts run in QuickJS").
import { performance } from 'node:perf_hooks';
import { newQuickJSWASMModule, RELEASE_SYNC, type QuickJSContext, type QuickJSHandle, type QuickJSWASMModule, type QuickJSDeferredPromise } from 'quickjs-emscripten';
import { PRELUDE } from './prelude.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** What a script may call of the hub. A rejection reaches the script as an Error it can catch. */
export interface SandboxHost {
  /** `kind`: agent, approve, workflow — or, for a bundled script only (src/scripts/bundled.ts), one of its privileged calls. */
  call(kind: string, args: Json[]): Promise<Json>;
  log(message: string): void;
  phase(title: string): void;
  /** The run's budget as `budget` shows it: total (null: none), spent so far, and held by running calls. */
  budget(): { total: number | null; spent: number; reserved: number };
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

const FILE = 'script.js';
const META = /^(\s*(?:\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*)export\s+const\s+meta\b/;

/** The script as QuickJS runs it: an async function body (top-level await and `return` work, as
 * in Claude Code), on the same lines as the source so that errors name the person's line. */
function wrap(source: string): string {
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

/** Runs `source` to its end (or its caps, or `signal`) with `args` and the hub's `host`. */
/** `privileged`: a bundled script of the hub's (src/scripts/bundled.ts): it also gets `hub.call(kind, ...args)`. */
export async function runInSandbox(o: { source: string; args: Json | undefined; host: SandboxHost; limits?: SandboxLimits; signal?: AbortSignal; privileged?: boolean }): Promise<SandboxOutcome> {
  const limits = o.limits ?? DEFAULT_LIMITS;
  const mod = await newQuickJSWASMModule(RELEASE_SYNC);
  const rt = mod.newRuntime();
  rt.setMemoryLimit(limits.memoryBytes);
  rt.setMaxStackSize(1 << 20);
  const heap = mod.getWasmMemory();
  let used = 0;
  let sliceStart = performance.now();
  let stopped: ScriptError | undefined;
  rt.setInterruptHandler(() => {
    if (stopped) return true;
    if (o.signal?.aborted) stopped = { name: 'Cancelled', message: 'the run was cancelled' };
    else if (used + performance.now() - sliceStart > limits.cpuMs) stopped = { name: 'CpuLimit', message: `the script used more than ${limits.cpuMs} ms of CPU time (an endless loop?); the cap is per run` };
    else if (heap.buffer.byteLength > limits.memoryBytes) stopped = { name: 'MemoryLimit', message: `the script used more than ${Math.round(limits.memoryBytes / 1048576)} MB of memory; the cap is per run` };
    return stopped !== undefined;
  });
  const vm = rt.newContext();
  const pending = new Set<QuickJSDeferredPromise>();
  let wake: () => void = () => undefined;
  const onAbort = (): void => wake();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  const slice = <T>(f: () => T): T => {
    sliceStart = performance.now();
    try { return f(); } finally { used += performance.now() - sliceStart; }
  };
  try {
    vm.newFunction('__call', (kindH, argsH) => {
      const kind = vm.getString(kindH);
      const args = vm.typeof(argsH) === 'string' ? (JSON.parse(vm.getString(argsH)) as Json[]) : [];
      const d = vm.newPromise();
      pending.add(d);
      o.host.call(kind, args).then(
        (v) => { if (d.alive) vm.newString(JSON.stringify(v ?? null)).consume((h) => d.resolve(h)); },
        (e: unknown) => { if (d.alive) rejectWith(vm, d, e); },
      ).finally(() => { pending.delete(d); if (d.alive) d.dispose(); wake(); });
      return d.handle;
    }).consume((f) => vm.setProp(vm.global, '__call', f));
    vm.newFunction('__log', (m) => { o.host.log(vm.getString(m)); }).consume((f) => vm.setProp(vm.global, '__log', f));
    vm.newFunction('__phase', (m) => { o.host.phase(vm.getString(m)); }).consume((f) => vm.setProp(vm.global, '__phase', f));
    vm.newFunction('__budget', () => vm.newString(JSON.stringify(o.host.budget()))).consume((f) => vm.setProp(vm.global, '__budget', f));
    if (o.privileged) vm.setProp(vm.global, '__privileged', vm.true);
    slice(() => vm.unwrapResult(vm.evalCode(PRELUDE, 'prelude.js'))).dispose();
    vm.newString(JSON.stringify(o.args ?? null)).consume((s) => vm.setProp(vm.global, '__args', s));
    vm.unwrapResult(vm.evalCode(`Object.defineProperty(globalThis, 'args', { value: ${o.args === undefined ? 'undefined' : 'JSON.parse(globalThis.__args)'} }); delete globalThis.__args;`, 'prelude.js')).dispose();

    const started = slice(() => vm.evalCode(wrap(o.source), FILE));
    if (started.error) {
      const e = stopped ?? errorOf(vm, started.error);
      started.error.dispose();
      return { status: 'failed', error: e, cpuMs: used };
    }
    const main = started.value;
    try {
      for (;;) {
        const jobs = slice(() => rt.executePendingJobs());
        if (jobs.error) {
          const e = stopped ?? errorOf(vm, jobs.error);
          jobs.error.dispose();
          return { status: 'failed', error: e, cpuMs: used };
        }
        if (stopped) return { status: 'failed', error: stopped, cpuMs: used };
        const state = vm.getPromiseState(main);
        if (state.type === 'fulfilled') {
          const value = state.value;
          try { return { status: 'returned', value: plain(vm, value), cpuMs: used }; } finally { if (value.alive && value !== main) value.dispose(); }
        }
        if (state.type === 'rejected') {
          const e = errorOf(vm, state.error);
          state.error.dispose();
          return { status: 'failed', error: e, cpuMs: used };
        }
        if (pending.size === 0 && !rt.hasPendingJob()) {
          return { status: 'failed', error: { name: 'Stalled', message: 'the script waits on a promise that nothing will settle (a call of the API is the only thing that settles later)' }, cpuMs: used };
        }
        if (!rt.hasPendingJob()) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            if (o.signal?.aborted) resolve();
          });
          wake = () => undefined;
          if (o.signal?.aborted) return { status: 'failed', error: { name: 'Cancelled', message: 'the run was cancelled' }, cpuMs: used };
        }
      }
    } finally {
      main.dispose();
    }
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    // A script stopped at its memory cap inside a job (after an await) leaves objects QuickJS does
    // not free, and freeing the runtime then aborts the WebAssembly module ("list_empty(&rt->gc_obj_list)").
    // The module is this run's alone and is dropped with it: the run's outcome stands.
    try {
      for (const d of pending) if (d.alive) d.dispose();
      vm.dispose();
      rt.dispose();
    } catch { /* the run's own module, dropped */ }
  }
}

function rejectWith(vm: QuickJSContext, d: QuickJSDeferredPromise, e: unknown): void {
  const err = vm.newError({ name: e instanceof ScriptCallError ? e.errorName : 'Error', message: e instanceof Error ? e.message : String(e) });
  if (e instanceof ScriptCallError && e.code) vm.newString(e.code).consume((c) => vm.setProp(err, 'code', c));
  d.reject(err);
  err.dispose();
}

/** The script's return value as plain JSON (what is not JSON is dropped, as JSON.stringify does). */
function plain(vm: QuickJSContext, h: QuickJSHandle): Json | undefined {
  if (vm.typeof(h) === 'undefined') return undefined;
  const json = vm.getProp(vm.global, 'JSON');
  const stringify = vm.getProp(json, 'stringify');
  try {
    const r = vm.callFunction(stringify, json, h);
    if (r.error) { r.error.dispose(); return undefined; }
    const t = r.value.consume((v) => (vm.typeof(v) === 'string' ? vm.getString(v) : undefined));
    return t === undefined ? undefined : (JSON.parse(t) as Json);
  } finally {
    stringify.dispose();
    json.dispose();
  }
}

/** An error thrown in the script, with the script's line (QuickJS's stack: `at … (script.js:L:C)`). */
function errorOf(vm: QuickJSContext, h: QuickJSHandle): ScriptError {
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
