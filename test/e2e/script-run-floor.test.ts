// A script run on the floor, as a person sees and steers it (issue 28 point 6), against a real
// hub whose children are scripted in process: one call of the run is done, one is held running.
// `overseer status` shows the run's line (phase, calls, cost) and marks its agents; `overseer
// watch` in tmux shows the run, Enter expands its calls and log, c on an ended call refuses, c
// + y on the run cancels it through the hub; the dashboard's Runs panel shows the calls and the
// log, and its Cancel run button cancels the run; the Crew page lists it under Script runs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { scriptFloorSuite } from '../helpers/scriptFloor.js';
import { gate } from '../helpers/gate.js';
import { eventually } from '../helpers/wait.js';
import { cliEnv, MAIN } from '../helpers/cli.js';
import { runOverseer } from '../helpers/overseerCli.js';
import { startTerminal } from '../helpers/tmux.js';
import { launchBrowser } from '../helpers/browser.js';
import { loggedIn } from '../helpers/dashboard.js';
import { job } from '../helpers/state.js';

const f = scriptFloorSuite();
const { held, terminals } = f;

const SCRIPT = `phase('Review')
const out = await parallel([() => agent('TASK:fast', { label: 'review fast' }), () => agent('TASK:slow', { label: 'review slow' })])
log('reviews in')
return out`;

/** A run with one call done and one running (held). */
async function halfDone(title: string): Promise<{ run_id: string; slowJob: string }> {
  held.push(gate(120_000));
  const r = await f.h.call('run_script', { title, script: SCRIPT });
  const v = await eventually(`${title}: one call done, one running`, async () => {
    const x = (await f.h.hub.scripts.view(r.run_id))!;
    const calls = x.calls as any[];
    return calls.length === 2 && calls.some((c) => c.status === 'done') && calls.some((c) => c.job_status === 'running') ? x : undefined;
  }, 20_000);
  return { run_id: r.run_id, slowJob: (v.calls as any[]).find((c) => c.label === 'review slow').job_id };
}

describe('a script run on the floor', () => {
  test('overseer status: the run\'s line, its agents marked, status --json and --floor', async () => {
    const { run_id, slowJob } = await halfDone('status run');
    const r = await runOverseer(f.h.home, ['status']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`▸ run ${run_id} "status run" running · phase Review · calls: 1 done, 1 running, 0 failed · \\$0\\.0000 — overseer run ${run_id}`));
    assert.match(r.stdout, new RegExp(`${slowJob} +running .*review slow +run ${run_id} #\\d`), 'the agent\'s row names its run and call');
    const json = JSON.parse((await runOverseer(f.h.home, ['status', '--json'])).stdout) as any[];
    assert.deepEqual(json.filter((j) => j.script_run?.run_id === run_id).map((j) => j.job_id).sort(), ((await f.h.hub.scripts.view(run_id))!.calls as any[]).map((c) => c.job_id).sort());
    assert.deepEqual(json.find((j) => j.job_id === slowJob).script_run, { run_id, call: ((await f.h.hub.scripts.view(run_id))!.calls as any[]).find((c) => c.job_id === slowJob).seq, title: 'status run', status: 'running' });
    const floor = JSON.parse((await runOverseer(f.h.home, ['status', '--floor'])).stdout);
    const fr = floor.runs.find((x: any) => x.run_id === run_id);
    assert.deepEqual({ status: fr.status, paused: fr.paused, phase: fr.phase, counts: fr.counts }, { status: 'running', paused: false, phase: 'Review', counts: { done: 1, running: 1, failed: 0 } });
    assert.deepEqual(fr.calls.map((c: any) => [c.label, c.job_title, c.status]).sort(), [['review fast', 'review fast', 'done'], ['review slow', 'review slow', 'running']]);
    assert.deepEqual(fr.log.map((l: any) => [l.kind, l.text]), [['phase', 'Review']]);
    await f.h.call('cancel_run', { run_id });
  });

  test('overseer watch: the run row, Enter shows its calls and log, c refuses an ended call, c + y cancels the run', { timeout: 120_000 }, async () => {
    const { run_id, slowJob } = await halfDone('watched run');
    const t = startTerminal([process.execPath, MAIN, 'watch'], { cwd: f.h.project, env: cliEnv({ OVERSEER_HOME: f.h.home, TERM: 'xterm-256color' }), width: 120, height: 40 });
    terminals.push(t);
    const row = /▸ watched run +running +1 done 1 running 0 failed +\$0\.0000/;
    await t.waitFor('the run under SCRIPT RUNS', (s) => /SCRIPT RUNS \(\d\)/.test(s) && row.test(s));
    // Select the run's row with j/k, as a person does.
    const selected = (s: string): string => s.split('\n').find((l) => l.startsWith('▶')) ?? '';
    for (let i = 0; i < 40 && !/watched run/.test(selected(t.screen().join('\n'))); i++) {
      const s = t.screen().join('\n');
      const lines = s.split('\n');
      const at = lines.findIndex((l) => l.startsWith('▶'));
      const target = lines.findIndex((l) => /▸ watched run/.test(l));
      t.keys([target > at ? 'j' : 'k']);
      await t.waitFor('the cursor to move', (x) => x.split('\n').findIndex((l) => l.startsWith('▶')) !== at, 5000);
    }
    t.keys(['Enter']);
    const open = await t.waitFor('its calls and log', (s) => /▾ watched run/.test(s) && /#\d review slow +running +j-\w+ +\$0\.0000/.test(s) && /#\d review fast +done +j-\w+/.test(s) && /│ \[phase\] Review/.test(s));
    assert.ok(open.includes(slowJob), 'the running call names its agent');
    // c on the done call: refused, nothing changes.
    const lines = open.split('\n');
    const at = lines.findIndex((l) => l.startsWith('▶'));
    const fast = lines.findIndex((l) => /#\d review fast/.test(l));
    for (let i = 0; i < Math.abs(fast - at); i++) t.keys([fast > at ? 'j' : 'k']);
    await t.waitFor('the done call selected', (s) => /review fast/.test(selected(s)));
    t.keys(['c']);
    await t.waitFor('the refusal', (s) => /call #\d \(review fast\) has ended \(done\): nothing to cancel/.test(s));
    // Back on the run's row: c asks, y cancels through the hub.
    // g (the top: the RUNNING agent), then j (the run's row right below it); each key waits for its frame.
    t.keys(['g']);
    await t.waitFor('the top row selected', (s) => { const l = selected(s); return /review slow/.test(l) && !/#\d/.test(l); });
    t.keys(['j']);
    await t.waitFor('the run row selected', (s) => /watched run/.test(selected(s)));
    t.keys(['c']);
    await t.waitFor('the y/n question', (s) => new RegExp(`cancel run "watched run" \\(${run_id}\\) and its running agents\\? y/n`).test(s));
    assert.equal((await f.h.hub.scripts.view(run_id))!.status, 'running', 'nothing happens before the answer');
    t.keys(['y']);
    await t.waitFor('the cancel confirmed', (s) => new RegExp(`run "watched run" \\(${run_id}\\) cancelled`).test(s));
    assert.equal((await f.h.hub.scripts.view(run_id))!.status, 'cancelled');
    await eventually('its running agent cancelled', async () => ((await job(f.h.hub, slowJob)).status === 'cancelled' ? true : undefined), 15_000);
    await t.waitFor('the run shown cancelled', (s) => /▾ watched run +cancelled/.test(s));
    t.keys(['q']);
    await eventually('watch to exit on q', () => (t.exited().dead ? true : undefined), 10_000);
  });

  test('the dashboard: the Runs panel shows the calls and the log, Cancel run cancels it; the Crew page lists it', { timeout: 120_000 }, async () => {
    const { run_id, slowJob } = await halfDone('page run');
    f.browser = await launchBrowser();
    const page = await loggedIn(f.browser, f.h, { hash: '#/runs' });
    await page.locator(`button[data-run="${run_id}"]`, { hasText: 'page run' }).click({ timeout: 15_000 });
    const calls = page.locator(`[data-script-run="${run_id}"] [data-testid=run-calls] tbody tr`);
    await calls.nth(1).waitFor({ timeout: 15_000 });
    assert.match(await page.locator(`[data-script-run="${run_id}"] [data-testid=run-meta]`).innerText(), /running · phase Review · 1 done · 1 running · 0 failed · \$0\.0000/);
    const slowRow = page.locator(`[data-script-run="${run_id}"] tr`, { hasText: 'review slow' });
    assert.match(await slowRow.innerText(), new RegExp(`review slow[\\s\\S]*Review[\\s\\S]*running[\\s\\S]*${slowJob}[\\s\\S]*Cancel call`));
    assert.match(await page.locator(`[data-script-run="${run_id}"] [data-testid=run-log]`).innerText(), /phase Review/);
    page.once('dialog', (d) => void d.accept());
    await page.locator(`[data-script-run="${run_id}"] button[data-action=cancel-run]`).click();
    await eventually('the run cancelled', async () => ((await f.h.hub.scripts.view(run_id))!.status === 'cancelled' ? true : undefined), 15_000);
    await page.locator(`[data-script-run="${run_id}"] [data-testid=run-meta]`, { hasText: 'cancelled' }).waitFor({ timeout: 15_000 });
    assert.equal(await page.locator(`[data-script-run="${run_id}"] button[data-action=cancel-run]`).count(), 0, 'no cancel on an ended run');
    // The Crew page: the run under Script runs, with its agents.
    await page.goto(page.url().replace(/#.*$/, '#/'));
    const section = page.locator('[data-section=runs]');
    await section.locator(`[data-run="${run_id}"]`).waitFor({ timeout: 15_000 });
    assert.match(await section.innerText(), /page run[\s\S]*cancelled/);
  });
});
