// READY TO SHIP on the Crew view: finished worktree jobs whose branch is not merged, each with its
// branch, diff stat, checks (passed / failed / not run), overlaps and age, and its verbs through
// the hub's floor API (src/floor/http.ts): Ship (merge through the merge queue, its checks run on
// the merged result; refused by the hub when its checks failed), Diff (the job's changes, inline),
// Attach (the command that takes the agent over in a terminal), Dismiss (out of the lane, branch kept),
// Send back (after a failed merge on record: its agent resumed with the failure, src/branches/sendBack.ts).
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { enc, post } from './api.js';
import { ago } from './format.js';
import { Changes } from './panels.js';

/** A row's failed merge and its send-back rounds (x/max). */
function sendBackText(b) {
  const why = b.reason === 'conflict' ? 'merge conflicted' : 'merge checks failed';
  if (b.status === 'failed') return `${why} · sent back ${b.round}/${b.max}`;
  if (b.status === 'asked') return `${why} · sent back ${b.round}/${b.max}: the bound, a person decides${b.request_id ? ` (${b.request_id})` : ''}`;
  return `sent back ${b.round}/${b.max} (${b.status})`;
}

const CHECKS = { passed: '✓ checks passed', failed: '✗ checks failed', not_run: '– no checks' };

function ShipRow({ item, onOpen, say }) {
  const [showDiff, setShowDiff] = useState(false);
  const [busy, setBusy] = useState(false);
  const [attach, setAttach] = useState(false);
  const verb = async (what) => {
    setBusy(true);
    try {
      const r = await post(`/api/floor/ready/${enc(item.job_id)}/${what}`, {});
      say(r.message, (what === 'ship' && !r.merged) || (what === 'send-back' && !r.sent));
    } catch (e) { say(e.message, true); } finally { setBusy(false); }
  };
  return html`<li class=${`ship-item checks-${item.checks}`} data-ship=${item.job_id}>
    <div class="head"><b>${item.title}</b>${item.role ? html` <span class="badge role" data-testid="role">${item.role}</span>` : ''} <span class="muted">${item.job_id}</span> · <code>${item.branch}</code> ·
      <span class=${item.checks === 'failed' ? 'bad' : item.checks === 'passed' ? 'ok' : 'muted'} data-testid="ship-checks">${CHECKS[item.checks]}</span> ·
      <span class="muted">ended ${ago(item.age_ms)} ago</span></div>
    <div class="muted">${item.diff_stat ?? 'no diff stat'}</div>
    ${item.send_back ? html`<div class=${item.send_back.status === 'failed' || item.send_back.status === 'asked' ? 'warn' : 'muted'} data-testid="ship-send-back">${sendBackText(item.send_back)}</div>` : ''}
    ${item.check_detail ? html`<div class="bad">${item.check_detail}</div>` : ''}
    ${item.overlaps.length ? html`<div class="warn">overlaps: ${item.overlaps.map((o) => `${o.title} (${o.job_id}): ${o.files.join(', ')}`).join('; ')}</div>` : ''}
    <div class="row">
      <button class="ok" disabled=${busy || item.checks === 'failed'} title=${item.checks === 'failed' ? 'its checks failed: never merged' : 'merge through the merge queue; its checks run on the merged result'}
        onClick=${() => { if (confirm(`Ship ${item.branch} (${item.title})? It is merged through the merge queue, its checks run on the result.`)) verb('ship'); }}>Ship</button>
      <button onClick=${() => setShowDiff(!showDiff)} aria-expanded=${showDiff}>Diff</button>
      <button onClick=${() => setAttach(!attach)}>Attach</button>
      <button onClick=${() => onOpen(item.job_id)}>Open agent</button>
      ${item.send_back?.sendable ? html`<button disabled=${busy} title="resume its agent in its worktree with the failed merge; its branch is merged again when it finishes"
        onClick=${() => { if (confirm(`Send ${item.title} back to its agent with its failed merge (round ${item.send_back.round + 1} of ${item.send_back.max})?`)) verb('send-back'); }}>Send back</button>` : ''}
      <button class="danger" disabled=${busy} onClick=${() => { if (confirm(`Dismiss ${item.title} from Ready to ship? Its branch ${item.branch} is kept.`)) verb('dismiss'); }}>Dismiss</button>
    </div>
    ${attach ? html`<div>Take over its agent in a terminal: <code class="cmd">overseer attach ${item.job_id}</code></div>` : ''}
    ${showDiff ? html`<${Changes} jobId=${item.job_id} status=${item.status} />` : ''}
  </li>`;
}

export function ReadyToShip({ items, onOpen, say }) {
  return html`<ul class="ship rows">${items.map((s) => html`<${ShipRow} key=${s.job_id} item=${s} onOpen=${onOpen} say=${say} />`)}</ul>`;
}
