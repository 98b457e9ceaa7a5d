// Benchmark 19: the dashboard in the real Chromium the tests use (playwright-core +
// @sparticuz/chromium), against a real hub process (`node dist/cli/main.js serve`, like
// benchmark 6) with a crew of 32 light children (bench/fixtures/sleep-agent.sh, all running).
//   A. First load of the page (a fresh browser context each time: cold cache, cookie set): bytes
//      over the wire (headers + bodies as sent, gzip included; the floor stream itself left
//      out, its first frame counted apart) and time from navigation to the first card on
//      screen; 10 loads. Then a reload of the same page (warm: 304s). Baseline: GET /api/floor
//      with the lead token from this process (the data alone).
//   B. A job's state change → the page's DOM: the lead freezes / thaws one job (pause_agent
//      freeze, resume_agent) over HTTP; the page records, with a MutationObserver, when that
//      card's data-status changed; baseline: when the page's own floor stream received the frame
//      saying so (the hub and the network; the rest is Preact rendering it); wall clocks of both
//      processes (the page's performance.timeOrigin + now). 60 samples, 150 ms apart.
//   C. The hub's CPU (utime+stime from /proc) and RSS while the lead writes a note every 100 ms
//      for 10 s (each write is a floor frame to every open page): with 0 pages, 10 pages on the
//      Crew view, 10 pages on the Notes view (each frame makes each page read the notes list).
// Needs dist/ (npm run build). Run alone: node --import tsx bench/dashboard.ts
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../test/helpers/browser.js';
import { REPO_ROOT, cleanEnv, f1, fixture, httpClient, out, removeDir, runAlone, stats, tempDir, wallMs, type Stats, type ToolClient, until as pollUntil } from './common.js';

const JOBS = 32;
const PAGES = 10;
const LOADS = 10;
const SAMPLES = 60;
const WINDOW_MS = 10_000;

export interface DashboardBenchResult {
  firstLoad: { bytes: number; requests: number; frameBytes: number; toFirstCard: Stats; reloadBytes: number; reloadMs: number; floorFetch: Stats; floorBytes: number };
  latency: { dom: Stats; frame: Stats; afterFrame: Stats };
  load: Record<string, { cpuPct: number; rssMb: number; pages: number }>;
}

const TICK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function cpuTicks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
}
function rssMb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

const until = <T>(what: string, ms: number, f: () => Promise<T | undefined> | T | undefined): Promise<T> => pollUntil(what, ms, f, 100);

interface Hub { proc: ChildProcess; pid: number; origin: string; token: string; lead: ToolClient }

async function startHub(dir: string): Promise<Hub> {
  const cli = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  const state = path.join(dir, 'state');
  let stderr = '';
  const proc = spawn(process.execPath, [cli, 'serve'], {
    cwd: dir, detached: true, stdio: ['ignore', 'ignore', 'pipe'],
    env: cleanEnv({ HOME: path.join(dir, 'home'), OVERSEER_HOME: state, OVERSEER_MAX_AGENTS: String(JOBS), OVERSEER_PORT: '0', OVERSEER_LOG_LEVEL: 'warn', CLAUDE_BIN: fixture('sleep-agent.sh'), OVERSEER_MAX_SESSIONS_PER_TOKEN: '1000' }),
  });
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (d: string) => { stderr = (stderr + d).slice(-4000); });
  const info = await until('hub.json', 20_000, () => {
    if (proc.exitCode !== null) throw new Error(`the hub exited with ${proc.exitCode}: ${stderr}`);
    try { const i = JSON.parse(readFileSync(path.join(state, 'hub.json'), 'utf8')) as { url: string }; return i.url ? i : undefined; } catch { return undefined; }
  });
  const token = readFileSync(path.join(state, 'lead.token'), 'utf8').trim();
  return { proc, pid: proc.pid!, origin: new URL(info.url).origin, token, lead: await httpClient(info.url, token, 'bench-dashboard-lead') };
}

/** A browser context holding a session cookie of its own (a code minted with the lead token, redeemed by this process). */
async function sessionContext(browser: Browser, hub: Hub): Promise<BrowserContext> {
  const r = await fetch(`${hub.origin}/api/web/login-code`, { method: 'POST', headers: { authorization: `Bearer ${hub.token}` } });
  const { url } = (await r.json()) as { url: string };
  const login = await fetch(url, { redirect: 'manual' });
  const cookie = /^([^=]+)=([^;]+)/.exec(login.headers.get('set-cookie') ?? '');
  if (login.status !== 303 || !cookie) throw new Error(`login answered ${login.status}`);
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await ctx.addCookies([{ name: cookie[1]!, value: cookie[2]!, url: hub.origin, httpOnly: true, sameSite: 'Strict' }]);
  return ctx;
}

/** Bytes of every finished response of a page (headers + body as sent); the event streams never finish and are not counted. */
function countBytes(page: Page): { bytes: () => number; requests: () => number; settle: () => Promise<void> } {
  let bytes = 0;
  let n = 0;
  const pending: Promise<void>[] = [];
  page.on('requestfinished', (req) => {
    pending.push(req.sizes().then((s) => { bytes += s.responseBodySize + s.responseHeadersSize; n++; }));
  });
  return { bytes: () => bytes, requests: () => n, settle: async () => { await Promise.all(pending); } };
}

async function firstLoad(browser: Browser, hub: Hub): Promise<DashboardBenchResult['firstLoad']> {
  const times: number[] = [];
  let bytes = 0;
  let requests = 0;
  let frameBytes = 0;
  let last: { ctx: BrowserContext; page: Page } | undefined;
  for (let i = 0; i < LOADS; i++) {
    const ctx = await sessionContext(browser, hub);
    const page = await ctx.newPage();
    const c = countBytes(page);
    const t0 = performance.now();
    await page.goto(`${hub.origin}/`);
    await page.locator('li.card').first().waitFor({ timeout: 30_000 });
    times.push(performance.now() - t0);
    await page.waitForLoadState('networkidle').catch(() => undefined);
    await c.settle();
    bytes = c.bytes();
    requests = c.requests();
    if (last) await last.ctx.close();
    last = { ctx, page };
  }
  const floor = await fetch(`${hub.origin}/api/floor`, { headers: { authorization: `Bearer ${hub.token}` } });
  frameBytes = Buffer.byteLength(await floor.text());
  // Warm: the same page reloaded (ETags: 304s).
  const c = countBytes(last!.page);
  const t0 = performance.now();
  await last!.page.reload();
  await last!.page.locator('li.card').first().waitFor({ timeout: 30_000 });
  const reloadMs = performance.now() - t0;
  await last!.page.waitForLoadState('networkidle').catch(() => undefined);
  await c.settle();
  await last!.ctx.close();
  const fetches: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    await (await fetch(`${hub.origin}/api/floor`, { headers: { authorization: `Bearer ${hub.token}` } })).text();
    fetches.push(performance.now() - t);
  }
  return { bytes, requests, frameBytes, toFirstCard: stats(times), reloadBytes: c.bytes(), reloadMs, floorFetch: stats(fetches), floorBytes: frameBytes };
}

/**
 * Installed in the page before its own scripts (part B): every floor frame the app's own stream
 * receives is kept raw with its arrival time (read later, so the app's handler is not delayed),
 * and a MutationObserver notes when the card of the watched job gets the wanted data-status.
 */
const PROBE = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  window.frames_ = [];
  window.res = {};
  const add = EventSource.prototype.addEventListener;
  EventSource.prototype.addEventListener = function (type, fn, o) {
    if (type !== 'floor' || !this.url.endsWith('/api/floor/stream')) return add.call(this, type, fn, o);
    return add.call(this, type, (e) => { window.frames_.push([now(), e.data]); if (window.frames_.length > 50) window.frames_.shift(); fn(e); }, o);
  };
  window.watch = (id) => new MutationObserver(() => {
    const card = document.querySelector('li.card[data-job="' + id + '"]');
    if (window.want && window.res.dom === undefined && card && card.dataset.status === window.want.status) window.res.dom = now();
  }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
  window.frameFor = (id, status, after) => {
    const walk = (jobs) => { for (const j of jobs) { if (j.job_id === id) return j.status; const s = walk(j.children || []); if (s) return s; } return undefined; };
    for (const [t, data] of window.frames_) {
      if (t < after) continue;
      const f = JSON.parse(data);
      if (walk([...f.running, ...f.queued, ...f.done]) === status) return t;
    }
    return undefined;
  };
})()`;

async function latency(browser: Browser, hub: Hub, jobId: string): Promise<DashboardBenchResult['latency']> {
  const ctx = await sessionContext(browser, hub);
  await ctx.addInitScript(PROBE);
  const page = await ctx.newPage();
  await page.goto(`${hub.origin}/`);
  await page.locator(`li.card[data-job="${jobId}"]`).waitFor({ timeout: 30_000 });
  await page.evaluate(`watch(${JSON.stringify(jobId)})`);
  const dom: number[] = [];
  const frame: number[] = [];
  const after: number[] = [];
  for (let i = -4; i < SAMPLES; i++) {
    const cur = await page.locator(`li.card[data-job="${jobId}"]`).getAttribute('data-status');
    const target = cur === 'frozen' ? 'running' : 'frozen';
    await page.evaluate(`res = {}; want = { status: ${JSON.stringify(target)} }`);
    const t0 = wallMs();
    if (target === 'frozen') await hub.lead.call('pause_agent', { job_id: jobId, mode: 'freeze' });
    else await hub.lead.call('resume_agent', { job_id: jobId });
    await page.waitForFunction(() => (globalThis as unknown as { res: { dom?: number } }).res.dom !== undefined, undefined, { timeout: 10_000 });
    const td = (await page.evaluate('res.dom')) as number;
    const tf = (await page.evaluate(`frameFor(${JSON.stringify(jobId)}, ${JSON.stringify(target)}, ${t0})`)) as number | undefined;
    if (tf === undefined) throw new Error(`the page never got a frame with ${jobId} ${target}`);
    if (i >= 0) { dom.push(td - t0); frame.push(tf - t0); after.push(td - tf); }
    await sleep(150);
  }
  await ctx.close();
  return { dom: stats(dom), frame: stats(frame), afterFrame: stats(after) };
}

async function loadPhase(browser: Browser, hub: Hub, label: string, pages: number, hash: string): Promise<{ cpuPct: number; rssMb: number; pages: number }> {
  const ctxs: BrowserContext[] = [];
  try {
    for (let i = 0; i < pages; i++) {
      const ctx = await sessionContext(browser, hub);
      const page = await ctx.newPage();
      await page.goto(`${hub.origin}/${hash}`);
      await page.locator('[data-testid=connection]', { hasText: 'live' }).waitFor({ timeout: 30_000 });
      ctxs.push(ctx);
    }
    await sleep(1000);
    const c0 = cpuTicks(hub.pid);
    const t0 = performance.now();
    const rss: number[] = [];
    let n = 0;
    while (performance.now() - t0 < WINDOW_MS) {
      await hub.lead.call('write_note', { key: `bench/dashboard/${n % 8}`, value: `change ${n}` });
      n++;
      if (n % 5 === 0) rss.push(rssMb(hub.pid));
      await sleep(Math.max(0, t0 + n * 100 - performance.now()));
    }
    const secs = (performance.now() - t0) / 1000;
    const cpuPct = ((cpuTicks(hub.pid) - c0) / TICK / secs) * 100;
    const r = { cpuPct, rssMb: Math.max(...rss), pages };
    out(`${label.padEnd(24)}: hub CPU ${f1(cpuPct)} % of a core, RSS ${f1(r.rssMb)} MB (${n} note writes in ${f1(secs)} s)\n`);
    return r;
  } finally {
    for (const c of ctxs) await c.close().catch(() => undefined);
  }
}

export async function benchDashboard(): Promise<DashboardBenchResult> {
  const dir = await tempDir('dashboard');
  let hub: Hub | undefined;
  let browser: Browser | undefined;
  try {
    hub = await startHub(dir);
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) ids.push((await hub.lead.call<{ job_id: string }>('spawn_agent', { prompt: `bench dashboard ${i}`, title: `dashboard job ${i}`, labels: [`team-${i % 4}`] })).job_id);
    const running = async (): Promise<number> => ((await (await fetch(`${hub!.origin}/api/floor`, { headers: { authorization: `Bearer ${hub!.token}` } })).json()) as { totals: { running: number } }).totals.running;
    await until(`${JOBS} running`, 60_000, async () => ((await running()) >= JOBS ? true : undefined));
    browser = await launchBrowser();

    const firstLoadR = await firstLoad(browser, hub);
    out(`first load (cold, ${JOBS} jobs): ${(firstLoadR.bytes / 1024).toFixed(1)} kB in ${firstLoadR.requests} responses (+ the first floor frame, ${(firstLoadR.frameBytes / 1024).toFixed(1)} kB), ` +
      `first card after p50 ${f1(firstLoadR.toFirstCard.p50)} ms (p99 ${f1(firstLoadR.toFirstCard.p99)}); reload ${(firstLoadR.reloadBytes / 1024).toFixed(1)} kB in ${f1(firstLoadR.reloadMs)} ms; ` +
      `baseline GET /api/floor p50 ${f1(firstLoadR.floorFetch.p50)} ms\n`);

    const lat = await latency(browser, hub, ids[0]!);
    out(`state change → DOM: p50 ${f1(lat.dom.p50)} ms, p99 ${f1(lat.dom.p99)} ms; → the frame in the page p50 ${f1(lat.frame.p50)} ms, p99 ${f1(lat.frame.p99)} ms; that frame → DOM p50 ${f1(lat.afterFrame.p50)} ms\n`);

    const load: DashboardBenchResult['load'] = {};
    load['0 pages'] = await loadPhase(browser, hub, '0 pages', 0, '');
    load[`${PAGES} pages on Crew`] = await loadPhase(browser, hub, `${PAGES} pages on Crew`, PAGES, '#/crew');
    load[`${PAGES} pages on Notes`] = await loadPhase(browser, hub, `${PAGES} pages on Notes`, PAGES, '#/notes');
    return { firstLoad: firstLoadR, latency: lat, load };
  } finally {
    await browser?.close().catch(() => undefined);
    if (hub) {
      await hub.lead.close();
      hub.proc.kill('SIGTERM');
      await Promise.race([new Promise((r) => hub!.proc.once('exit', r)), sleep(15_000)]);
      try { process.kill(-hub.pid, 'SIGKILL'); } catch { /* gone */ }
    }
    await removeDir(dir);
  }
}

runAlone(import.meta.url, benchDashboard);
