// READY TO SHIP on the Crew view: finished worktree jobs whose branch is not merged, each with its
// branch, diff stat, checks (passed / failed / not run), overlaps and age, and its verbs through
// the hub's floor API (src/floor/http.ts): Ship (merge through the merge queue, its checks run on
// the merged result; refused by the hub when its checks failed), Diff (the job's changes, inline),
// Attach (the command that takes the agent over in a terminal), Dismiss (out of the lane, branch kept).
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { enc, post } from './api.js';
import { ago } from './format.js';
import { Changes } from './panels.js';

const CHECKS = { passed: '✓ checks passed', failed: '✗ checks failed', not_run: '– no checks' };

function ShipRow({ item, onOpen, say }) {
  const [showDiff, setShowDiff] = useState(false);
  const [busy, setBusy] = useState(false);
  const [attach, setAttach] = useState(false);
  const verb = async (what) => {
    setBusy(true);
    try {
      const r = await post(`/api/floor/ready/${enc(item.job_id)}/${what}`, {});
      say(r.message, what === 'ship' && !r.merged);
    } catch (e) { say(e.message, true); } finally { setBusy(false); }
  };
  return html`<li class=${`ship-item checks-${item.checks}`} data-ship=${item.job_id}>
    <div class="head"><b>${item.title}</b> <span class="muted">${item.job_id}</span> · <code>${item.branch}</code> ·
      <span class=${item.checks === 'failed' ? 'bad' : item.checks === 'passed' ? 'ok' : 'muted'} data-testid="ship-checks">${CHECKS[item.checks]}</span> ·
      <span class="muted">ended ${ago(item.age_ms)} ago</span></div>
    <div class="muted">${item.diff_stat ?? 'no diff stat'}</div>
    ${item.check_detail ? html`<div class="bad">${item.check_detail}</div>` : ''}
    ${item.overlaps.length ? html`<div class="warn">overlaps: ${item.overlaps.map((o) => `${o.title} (${o.job_id}): ${o.files.join(', ')}`).join('; ')}</div>` : ''}
    <div class="row">
      <button class="ok" disabled=${busy || item.checks === 'failed'} title=${item.checks === 'failed' ? 'its checks failed: never merged' : 'merge through the merge queue; its checks run on the merged result'}
        onClick=${() => { if (confirm(`Ship ${item.branch} (${item.title})? It is merged through the merge queue, its checks run on the result.`)) verb('ship'); }}>Ship</button>
      <button onClick=${() => setShowDiff(!showDiff)} aria-expanded=${showDiff}>Diff</button>
      <button onClick=${() => setAttach(!attach)}>Attach</button>
      <button onClick=${() => onOpen(item.job_id)}>Open agent</button>
      <button class="danger" disabled=${busy} onClick=${() => { if (confirm(`Dismiss ${item.title} from Ready to ship? Its branch ${item.branch} is kept.`)) verb('dismiss'); }}>Dismiss</button>
    </div>
    ${attach ? html`<div>Take over its agent in a terminal: <code class="cmd">overseer attach ${item.job_id}</code></div>` : ''}
    ${showDiff ? html`<${Changes} jobId=${item.job_id} status=${item.status} />` : ''}
  </li>`;
}

export function ReadyToShip({ items, onOpen, say }) {
  return html`<ul class="ship rows">${items.map((s) => html`<${ShipRow} key=${s.job_id} item=${s} onOpen=${onOpen} say=${say} />`)}</ul>`;
}
