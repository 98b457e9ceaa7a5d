// Steering a script run from the watch and the dashboard through pause_run and cancel_run { call }
// (the engine's tools): p pauses the run (no new call starts), u unpauses it; c on a running call's
// row cancels that call only (the script catches it and the run goes on); the dashboard's Pause
// and Cancel call buttons do the same.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { scriptFloorSuite } from '../helpers/scriptFloor.js';
import { gate } from '../helpers/gate.js';
import { eventually } from '../helpers/wait.js';
import { cliEnv, MAIN } from '../helpers/cli.js';
import { startTerminal, type Terminal } from '../helpers/tmux.js';
import { launchBrowser } from '../helpers/browser.js';
import { loggedIn } from '../helpers/dashboard.js';
import { job } from '../helpers/state.js';

const f = scriptFloorSuite();
const { held, terminals } = f;

// The slow call is cancelled by the person; the script catches it and starts one more call.
const SCRIPT = `phase('Review')
let slow
try { slow = await agent('TASK:slow', { label: 'review slow' }) } catch (e) { slow = e.code }
const after = await agent('TASK:after', { label: 'after' })
return [slow, after]`;

async function started(title: string): Promise<{ run_id: string; slowJob: string }> {
  held.push(gate(120_000));
  const r = await f.h.call('run_script', { title, script: SCRIPT });
  const v = await eventually(`${title}: the slow call running`, async () => {
    const c = ((await f.h.hub.scripts.view(r.run_id))!.calls as any[])[0];
    return c?.job_status === 'running' ? c : undefined;
  }, 20_000);
  return { run_id: r.run_id, slowJob: v.job_id };
}

const selected = (s: string): string => s.split('\n').find((l) => l.startsWith('▶')) ?? '';

async function selectRow(t: Terminal, re: RegExp): Promise<void> {
  for (let i = 0; i < 40; i++) {
    const s = t.screen().join('\n');
    if (re.test(selected(s))) return;
    const lines = s.split('\n');
    const at = lines.findIndex((l) => l.startsWith('▶'));
    const target = lines.findIndex((l) => re.test(l));
    if (target < 0) break;
    t.keys([target > at ? 'j' : 'k']);
    await t.waitFor('the cursor to move', (x) => x.split('\n').findIndex((l) => l.startsWith('▶')) !== at, 5000);
  }
  throw new Error(`could not select ${re}:\n${t.screen().join('\n')}`);
}

describe('steering a script run', () => {
  test('watch: p pauses, u unpauses, c + y on a running call cancels just that call', { timeout: 120_000 }, async () => {
    const { run_id, slowJob } = await started('steered run');
    const t = startTerminal([process.execPath, MAIN, 'watch'], { cwd: f.h.project, env: cliEnv({ OVERSEER_HOME: f.h.home, TERM: 'xterm-256color' }), width: 120, height: 40 });
    terminals.push(t);
    await t.waitFor('the run', (s) => /▸ steered run +running/.test(s));
    await selectRow(t, /▸ steered run/);
    t.keys(['p']);
    await t.waitFor('paused', (s) => new RegExp(`run "steered run" \\(${run_id}\\) paused: no new call starts`).test(s) && /steered run +running · paused/.test(s));
    assert.equal((await f.h.hub.scripts.view(run_id))!.paused, true);
    t.keys(['u']);
    await t.waitFor('unpaused', (s) => new RegExp(`run "steered run" \\(${run_id}\\) unpaused`).test(s) && !/steered run +running · paused/.test(s));
    t.keys(['Enter']);
    await t.waitFor('its calls', (s) => /#1 review slow +running/.test(s));
    await selectRow(t, /#1 review slow/);
    t.keys(['c']);
    await t.waitFor('the y/n', (s) => new RegExp(`cancel call #1 \\(review slow\\) of run ${run_id}\\? .*y/n`).test(s));
    t.keys(['y']);
    await t.waitFor('the call cancelled', (s) => new RegExp(`call #1 of run ${run_id} cancelled`).test(s));
    const v = await eventually('the run went on and succeeded', async () => { const x = (await f.h.hub.scripts.view(run_id))!; return x.status === 'succeeded' ? x : undefined; }, 20_000);
    assert.deepEqual(v.result, ['cancelled', 'did after']);
    assert.equal((await job(f.h.hub, slowJob)).status, 'cancelled');
    t.keys(['q']);
  });

  test('dashboard: Pause / Unpause and Cancel call', { timeout: 120_000 }, async () => {
    const { run_id, slowJob } = await started('page steered');
    f.browser = await launchBrowser();
    const page = await loggedIn(f.browser, f.h, { hash: '#/runs' });
    await page.locator(`button[data-run="${run_id}"]`).click({ timeout: 15_000 });
    const box = page.locator(`[data-script-run="${run_id}"]`);
    await box.locator('button[data-action=pause]', { hasText: 'Pause' }).click({ timeout: 15_000 });
    await eventually('paused', async () => ((await f.h.hub.scripts.view(run_id))!.paused === true ? true : undefined), 10_000);
    await box.locator('[data-testid=run-meta]', { hasText: 'paused' }).waitFor({ timeout: 10_000 });
    await box.locator('button[data-action=pause]', { hasText: 'Unpause' }).click();
    await eventually('unpaused', async () => ((await f.h.hub.scripts.view(run_id))!.paused === false ? true : undefined), 10_000);
    page.once('dialog', (d) => void d.accept());
    await box.locator('tr[data-call="1"] button[data-action=cancel-call]').click({ timeout: 10_000 });
    const v = await eventually('the run went on and succeeded', async () => { const x = (await f.h.hub.scripts.view(run_id))!; return x.status === 'succeeded' ? x : undefined; }, 20_000);
    assert.deepEqual(v.result, ['cancelled', 'did after']);
    assert.equal((await job(f.h.hub, slowJob)).status, 'cancelled');
  });
});
