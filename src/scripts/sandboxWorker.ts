// The worker side of the script sandbox (src/scripts/sandbox.ts starts one per run in a
// node:worker_threads Worker and terminates it at the end): QuickJS compiled to WebAssembly
// (quickjs-emscripten), one WebAssembly module per run, so a script shares no heap with the hub
// or another run and reaches nothing but the API of prelude.ts. The script computes on this
// thread, never on the hub's: an endless loop holds this worker, while the hub answers its
// children, MCP and the dashboard (docs/decisions.md, "Scripts run in a worker").
//
// The hub's calls (agent, approve, workflow) cross as messages and are settled here when the
// answer comes back; log and phase are one-way messages; `budget` is synchronous in the script,
// so it asks the hub and blocks on the shared memory (Atomics.wait) until the hub writes the
// answer there. Caps per run: CPU time spent inside QuickJS (an infinite loop) and the
// WebAssembly heap (a runaway allocation: QuickJS's own malloc limit did not stop one in 17 s,
// the heap check stops it at the cap). The CPU used so far and the start of the current slice are
// mirrored into the shared memory, so the hub can stop a worker stuck where QuickJS does not call
// its interrupt handler (a long builtin). Errors name the script's line.
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { newQuickJSWASMModule, RELEASE_SYNC, type QuickJSContext, type QuickJSHandle, type QuickJSDeferredPromise } from 'quickjs-emscripten';
import { PRELUDE } from './prelude.js';
import { cpuLimitError, errorOf, FILE, ScriptCallError, shared, wrap, type FromWorker, type Json, type SandboxLimits, type SandboxOutcome, type ScriptError, type ToWorker, type WorkerStart } from './sandbox.js';

const port = parentPort;
if (!port) throw new Error('sandboxWorker.ts runs in a worker thread (src/scripts/sandbox.ts starts it)');
const start = workerData as WorkerStart;
const mem = shared(start.shared);
const post = (m: FromWorker): void => port.postMessage(m);
const epoch = (): number => performance.timeOrigin + performance.now();

// Answers of the hub to this run's calls, by id; an abort wakes the loop.
const answers = new Map<number, { resolve: (v: Json) => void; reject: (e: unknown) => void }>();
let nextId = 1;
let onAbort: () => void = () => undefined;
port.on('message', (m: ToWorker) => {
  if (m.t === 'abort') { onAbort(); return; }
  const a = answers.get(m.id);
  if (!a) return;
  answers.delete(m.id);
  if (m.ok) a.resolve(JSON.parse(m.json) as Json);
  else a.reject(new ScriptCallError(m.error.name, m.error.message, m.error.code));
});

void runQuickJS(start.source, start.args, start.limits, start.privileged).then(
  (outcome) => post({ t: 'done', outcome }),
  (e: unknown) => post({ t: 'done', outcome: { status: 'failed', error: { name: 'SandboxError', message: `the sandbox failed: ${e instanceof Error ? e.message : String(e)}` }, cpuMs: mem.f64[1] ?? 0 } }),
);

async function runQuickJS(source: string, args: Json | undefined, limits: SandboxLimits, privileged: boolean): Promise<SandboxOutcome> {
  const mod = await newQuickJSWASMModule(RELEASE_SYNC);
  const rt = mod.newRuntime();
  rt.setMemoryLimit(limits.memoryBytes);
  rt.setMaxStackSize(1 << 20);
  const heap = mod.getWasmMemory();
  let used = 0;
  let sliceStart = performance.now();
  let stopped: ScriptError | undefined;
  const aborted = (): boolean => Atomics.load(mem.i32, 0) === 1;
  rt.setInterruptHandler(() => {
    if (stopped) return true;
    if (aborted()) stopped = { name: 'Cancelled', message: 'the run was cancelled' };
    else if (used + performance.now() - sliceStart > limits.cpuMs) stopped = cpuLimitError(limits);
    else if (heap.buffer.byteLength > limits.memoryBytes) stopped = { name: 'MemoryLimit', message: `the script used more than ${Math.round(limits.memoryBytes / 1048576)} MB of memory; the cap is per run` };
    return stopped !== undefined;
  });
  const vm = rt.newContext();
  const pending = new Set<QuickJSDeferredPromise>();
  let wake: () => void = () => undefined;
  onAbort = () => wake();
  // A slice is time spent inside QuickJS; the hub sees it in the shared memory (its backstop).
  const enter = (): void => { sliceStart = performance.now(); mem.f64[2] = epoch(); };
  const leave = (): void => { used += performance.now() - sliceStart; mem.f64[1] = used; mem.f64[2] = 0; };
  const slice = <T>(f: () => T): T => {
    enter();
    try { return f(); } finally { leave(); }
  };
  const call = (kind: string, callArgs: Json[]): Promise<Json> => new Promise((resolve, reject) => {
    const id = nextId++;
    answers.set(id, { resolve, reject });
    post({ t: 'call', id, kind, args: callArgs });
  });
  /** The hub's budget, synchronously: ask, then block until the hub writes it (not counted as the script's CPU). */
  const budget = (): string => {
    leave();
    try {
      const seq = Atomics.load(mem.i32, 1);
      post({ t: 'budget' });
      if (Atomics.wait(mem.i32, 1, seq, 10_000) === 'timed-out') throw new Error('budget: the hub did not answer within 10 s');
      const total = mem.f64[3] ?? NaN;
      if (Number.isNaN(mem.f64[4])) throw new Error('budget: the hub could not read the run\'s budget');
      return JSON.stringify({ total: Number.isNaN(total) ? null : total, spent: mem.f64[4], reserved: mem.f64[5] });
    } finally { enter(); }
  };
  try {
    vm.newFunction('__call', (kindH, argsH) => {
      const kind = vm.getString(kindH);
      const callArgs = vm.typeof(argsH) === 'string' ? (JSON.parse(vm.getString(argsH)) as Json[]) : [];
      const d = vm.newPromise();
      pending.add(d);
      call(kind, callArgs).then(
        (v) => { if (d.alive) vm.newString(JSON.stringify(v ?? null)).consume((h) => d.resolve(h)); },
        (e: unknown) => { if (d.alive) rejectWith(vm, d, e); },
      ).finally(() => { pending.delete(d); if (d.alive) d.dispose(); wake(); });
      return d.handle;
    }).consume((f) => vm.setProp(vm.global, '__call', f));
    vm.newFunction('__log', (m) => { post({ t: 'log', text: vm.getString(m) }); }).consume((f) => vm.setProp(vm.global, '__log', f));
    vm.newFunction('__phase', (m) => { post({ t: 'phase', text: vm.getString(m) }); }).consume((f) => vm.setProp(vm.global, '__phase', f));
    vm.newFunction('__budget', () => vm.newString(budget())).consume((f) => vm.setProp(vm.global, '__budget', f));
    if (privileged) vm.setProp(vm.global, '__privileged', vm.true);
    slice(() => vm.unwrapResult(vm.evalCode(PRELUDE, 'prelude.js'))).dispose();
    vm.newString(JSON.stringify(args ?? null)).consume((s) => vm.setProp(vm.global, '__args', s));
    vm.unwrapResult(vm.evalCode(`Object.defineProperty(globalThis, 'args', { value: ${args === undefined ? 'undefined' : 'JSON.parse(globalThis.__args)'} }); delete globalThis.__args;`, 'prelude.js')).dispose();

    const started = slice(() => vm.evalCode(wrap(source), FILE));
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
            if (aborted()) resolve();
          });
          wake = () => undefined;
          if (aborted()) return { status: 'failed', error: { name: 'Cancelled', message: 'the run was cancelled' }, cpuMs: used };
        }
      }
    } finally {
      main.dispose();
    }
  } finally {
    // A script stopped at its memory cap inside a job (after an await) leaves objects QuickJS does
    // not free, and freeing the runtime then aborts the WebAssembly module ("list_empty(&rt->gc_obj_list)").
    // The module is this run's alone and is dropped with the worker: the run's outcome stands.
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
