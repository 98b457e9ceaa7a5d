// The script sandbox (src/scripts/sandbox.ts): the script API as Claude Code's Workflow has it,
// nothing else reachable, the caps per run, and errors that name the script's line. A host that
// answers calls from a table stands in for the hub (the hub's side is tested with the runs).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { checkSyntax, runInSandbox, ScriptCallError, type Json, type SandboxHost } from '../../src/scripts/sandbox.js';

interface Recorder extends SandboxHost { calls: { kind: string; args: Json[] }[]; logs: string[]; phases: string[] }

function host(answer: (kind: string, args: Json[]) => Promise<Json> = async (_k, a) => `done: ${String(a[0])}`): Recorder {
  const r: Recorder = {
    calls: [], logs: [], phases: [],
    call: (kind, args) => { r.calls.push({ kind, args }); return answer(kind, args); },
    log: (m) => { r.logs.push(m); },
    phase: (t) => { r.phases.push(t); },
    budget: () => ({ total: 10, spent: 4, reserved: 1.5 }),
  };
  return r;
}

describe('script sandbox', () => {
  test('fans out with parallel, pipes with pipeline, logs, and returns a value', async () => {
    const h = host(async (kind, args) => {
      await new Promise((r) => setImmediate(r));
      const opts = args[1] as { schema?: unknown } | undefined;
      return opts?.schema ? { verdict: 'ok', of: String(args[0]) } : `done: ${String(args[0])}`;
    });
    const out = await runInSandbox({
      host: h, args: { files: ['a.ts', 'b.ts', 'c.ts'] },
      source: `export const meta = { name: 'review', description: 'review three files' }
phase('Review')
const reviews = await parallel(args.files.map((f) => () => agent('review ' + f, { label: f })))
log(reviews.length + ' reviews')
const verdicts = await pipeline(reviews, (r, item, i) => agent('verify ' + r, { schema: { type: 'object' } }), (v) => v.verdict)
return { reviews, verdicts, meta: meta.name }`,
    });
    assert.deepEqual(out.status, 'returned', JSON.stringify(out));
    assert.deepEqual((out as { value: Json }).value, {
      reviews: ['done: review a.ts', 'done: review b.ts', 'done: review c.ts'], verdicts: ['ok', 'ok', 'ok'], meta: 'review',
    });
    assert.deepEqual(h.calls.slice(0, 3), ['a.ts', 'b.ts', 'c.ts'].map((f) => ({ kind: 'agent', args: [`review ${f}`, { label: f }] })));
    assert.equal(h.calls.length, 6);
    assert.deepEqual(h.logs, ['3 reviews']);
    assert.deepEqual(h.phases, ['Review']);
  });

  test('a failed thunk gives null in parallel, a throwing stage drops its item in pipeline', async () => {
    const h = host(async (_k, args) => { if (String(args[0]).includes('bad')) throw new Error('the agent failed'); return 'ok'; });
    const out = await runInSandbox({
      host: h, args: undefined,
      source: `const p = await parallel([() => agent('good'), () => agent('bad'), () => { throw new Error('x') }])
const q = await pipeline(['good', 'bad'], (x) => agent(x), (r) => r + '!')
return { p, q }`,
    });
    assert.deepEqual(out, { status: 'returned', value: { p: ['ok', null, null], q: ['ok!', null] }, cpuMs: (out as { cpuMs: number }).cpuMs });
  });

  test('an error the hub gives a call is an exception the script can catch, with its name and code', async () => {
    const h = host(async () => { throw new ScriptCallError('BudgetExceeded', 'the run has $0.10 left; this agent needs $0.50', 'budget_exceeded'); });
    const out = await runInSandbox({ host: h, args: undefined, source: `try { await agent('x', { budget_usd: 0.5 }) } catch (e) { return [e.name, e.code, e.message] }` });
    assert.equal(out.status, 'returned');
    assert.deepEqual((out as { value: Json }).value, ['BudgetExceeded', 'budget_exceeded', 'the run has $0.10 left; this agent needs $0.50']);
  });

  test('an endless loop is stopped by the CPU cap and names its line', async () => {
    const t0 = Date.now();
    const out = await runInSandbox({ host: host(), args: undefined, limits: { cpuMs: 300, memoryBytes: 256 << 20 }, source: `log('start')\nlet i = 0\nwhile (true) { i++ }` });
    assert.equal(out.status, 'failed');
    const e = (out as { error: { name: string; line?: number; message: string } }).error;
    assert.equal(e.name, 'CpuLimit', JSON.stringify(e));
    assert.match(e.message, /300 ms of CPU time/);
    assert.ok(Date.now() - t0 < 5_000, `took ${Date.now() - t0} ms`);
  });

  test('an endless loop between calls counts the CPU of the whole run', async () => {
    const out = await runInSandbox({ host: host(), args: undefined, limits: { cpuMs: 300, memoryBytes: 256 << 20 }, source: `for (;;) { await agent('x'); const t = Symbol(); for (let i = 0; i < 1e5; i++) {} }` });
    assert.equal(out.status, 'failed');
    assert.equal((out as { error: { name: string } }).error.name, 'CpuLimit');
  });

  test('a runaway allocation is stopped by the memory cap', async () => {
    const t0 = Date.now();
    const out = await runInSandbox({ host: host(), args: undefined, limits: { cpuMs: 60_000, memoryBytes: 64 << 20 }, source: `const a = []\nfor (let i = 0; ; i++) a.push('x'.repeat(1000) + i)` });
    assert.equal(out.status, 'failed');
    const e = (out as { error: { name: string } }).error;
    assert.ok(e.name === 'MemoryLimit' || /out of memory/.test(JSON.stringify(e)), JSON.stringify(e));
    assert.ok(Date.now() - t0 < 20_000, `took ${Date.now() - t0} ms`);
  });

  test('a syntax error is refused before anything runs, with its line', async () => {
    const e = await checkSyntax(`export const meta = { name: 'x', description: 'y' }\nconst a = 1\nconst b = ;\n`);
    assert.ok(e);
    assert.equal(e.name, 'SyntaxError');
    assert.equal(e.line, 3, JSON.stringify(e));
    assert.equal(await checkSyntax(`const r = await agent('x')\nreturn r`), null);
  });

  test('a runtime error fails the run with the script\'s line', async () => {
    const out = await runInSandbox({ host: host(), args: undefined, source: `const r = await agent('x')\n\nundefinedFunction(r)` });
    assert.equal(out.status, 'failed');
    const e = (out as { error: { name: string; line?: number; message: string } }).error;
    assert.equal(e.name, 'ReferenceError');
    assert.equal(e.line, 3, JSON.stringify(e));
  });

  test('no clock, no randomness, no file system, network or process', async () => {
    const out = await runInSandbox({
      host: host(), args: undefined,
      source: `const t = (f) => { try { f(); return 'ran' } catch (e) { return e.message } }
return {
  now: t(() => Date.now()), date: t(() => new Date()), random: t(() => Math.random()), epoch: new Date(0).toISOString(),
  reach: [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof std, typeof os, typeof __call, typeof WebAssembly],
}`,
    });
    assert.equal(out.status, 'returned', JSON.stringify(out));
    const v = (out as unknown as { value: { now: string; date: string; random: string; epoch: string; reach: string[] } }).value;
    assert.match(v.now, /Date\.now\(\) is not available/);
    assert.match(v.date, /new Date\(\) is not available/);
    assert.match(v.random, /Math\.random\(\) is not available/);
    assert.equal(v.epoch, '1970-01-01T00:00:00.000Z');
    assert.deepEqual(v.reach, Array(8).fill('undefined'));
  });

  test('the API cannot be replaced by the script', async () => {
    const out = await runInSandbox({ host: host(), args: undefined, source: `try { agent = () => 'mine' } catch {}\nreturn await agent('x')` });
    assert.deepEqual((out as { value: Json }).value, 'done: x');
  });

  test('args and budget as the script sees them: remaining() is what is neither spent nor reserved', async () => {
    const out = await runInSandbox({ host: host(), args: ['a', 1], source: `return [args, budget.total, budget.spent(), budget.reserved(), budget.remaining()]` });
    assert.deepEqual((out as { value: Json }).value, [['a', 1], 10, 4, 1.5, 4.5]);
  });

  test('a script that waits on nothing fails instead of hanging', async () => {
    const out = await runInSandbox({ host: host(), args: undefined, source: `await new Promise(() => {})` });
    assert.equal((out as { error: { name: string } }).error.name, 'Stalled');
  });

  test('cancel ends a run that waits on a call', async () => {
    const ac = new AbortController();
    const h = host(() => new Promise(() => { ac.abort(); }));
    const out = await runInSandbox({ host: h, args: undefined, signal: ac.signal, source: `await agent('forever')` });
    assert.equal((out as { error: { name: string } }).error.name, 'Cancelled');
  });

  test('a script over 512 KiB is refused', async () => {
    const e = await checkSyntax(`// ${'x'.repeat(512 * 1024)}`);
    assert.equal(e?.name, 'ScriptTooLarge');
  });
});

test('the hub\'s CPU backstop reads a slice\'s start once: a slice that ends between two reads is not counted from the epoch', async () => {
  const { cpuSoFar } = await import('../../src/scripts/sandbox.js');
  const now = 1_795_000_010_000;
  // f64[1]: 40 ms of finished slices; f64[2]: a slice started 5 ms ago, which the worker ends (writes 0) right after the first read of it.
  let reads = 0;
  const racing = new Proxy([0, 40, now - 5], { get: (t, k) => (k === '2' ? (reads++ === 0 ? t[2] : 0) : Reflect.get(t, k)) }) as unknown as number[];
  const got = cpuSoFar(racing, now);
  assert.ok(got <= 45, `counted ${got} ms of CPU (40 finished + at most the 5 ms slice)`);
  assert.equal(cpuSoFar([0, 40, 0], now), 40);
  assert.equal(cpuSoFar([0, 40, now - 5], now), 45);
});
