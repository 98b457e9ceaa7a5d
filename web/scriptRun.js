// A script run (docs/scripts.md) as the page shows it, on the Crew page (from the floor) and in
// the Runs panel (from get_run's view): status, pause, phase, calls done/running/failed, cost of
// budget, the error with its line; each call with its agent (opens the agent panel), status and
// cost; the log. The person's verbs go to the hub's tools (cancel_run, pause_run, cancel_run {call}).
import { html } from 'htm/preact';
import { enc, post } from './api.js';
import { tone, usd, when } from './format.js';

const countOf = (calls, s) => calls.filter((c) => c.status === s).length;

/** One line: status · paused · phase · calls · cost of budget. */
export function runMeta(r) {
  const calls = r.calls ?? [];
  const c = r.counts ?? { done: countOf(calls, 'done'), running: countOf(calls, 'running'), failed: countOf(calls, 'failed') };
  const phase = r.phase ?? [...calls].reverse().find((x) => x.phase)?.phase;
  return [`${r.status}${r.paused ? ' · paused' : ''}`, phase ? `phase ${phase}` : '', `${c.done} done · ${c.running} running · ${c.failed} failed`,
    r.budget_usd !== null && r.budget_usd !== undefined ? `${usd(r.cost_usd)} of ${usd(r.budget_usd)}` : usd(r.cost_usd)].filter(Boolean).join(' · ');
}

export function ScriptRun({ run: r, onOpen, say, done, compact }) {
  const act = async (what, path, body) => {
    try { const v = await post(path, body); say?.(`${what}: ${v.status}${v.paused ? ' (paused)' : ''}`); done?.(); } catch (e) { say?.(e.message, true); }
  };
  const live = r.status === 'running';
  const base = `/api/web/runs/${enc(r.run_id)}`;
  const error = r.status !== 'succeeded' ? r.error : null;
  return html`<div class="script-run" data-script-run=${r.run_id}>
    ${compact ? '' : html`<p class="muted" data-testid="run-meta">${runMeta(r)}</p>`}
    ${error ? html`<p class="banner bad" data-testid="run-error">${error}</p>` : ''}
    ${live ? html`<p class="row">
      <button data-action="pause" onClick=${() => act(r.paused ? 'Unpaused' : 'Paused', `${base}/pause`, { paused: !r.paused })}>${r.paused ? 'Unpause' : 'Pause'}</button>
      <button class="danger" data-action="cancel-run" onClick=${() => confirm(`Cancel the run "${r.title}" and its running agents?`) && act('Run cancelled', `${base}/cancel`, {})}>Cancel run</button></p>` : ''}
    <div class="scroll-x"><table data-testid="run-calls" data-nav-group><thead><tr><th>#</th><th>call</th><th>phase</th><th>status</th><th>agent</th><th>cost</th><th></th></tr></thead>
      <tbody>${(r.calls ?? []).map((c) => html`<tr data-call=${c.seq}>
        <td class="num">${c.seq}</td>
        <td>${c.kind === 'agent' ? '' : html`<b>${c.kind}</b> `}${c.label ?? c.job_title ?? ''}</td>
        <td>${c.phase ?? ''}</td>
        <td><span class=${`dot ${tone(c.job_status ?? (c.status === 'done' ? 'succeeded' : c.status))}`}></span>${c.status}${c.job_status && c.job_status !== 'succeeded' && c.job_status !== c.status ? ` (${c.job_status})` : ''}</td>
        <td>${c.job_id ? html`<button class="link nav-item" data-job=${c.job_id} onClick=${() => onOpen(c.job_id)}>${c.job_id}</button>` : c.request_id ?? '—'}</td>
        <td class="num">${c.kind === 'agent' ? usd(c.cost_usd) : ''}</td>
        <td>${live && c.status === 'running' ? html`<button class="danger" data-action="cancel-call" onClick=${() => confirm(`Cancel call #${c.seq}? The script sees it fail with code "cancelled".`) && act(`Call #${c.seq} cancelled`, `${base}/calls/${c.seq}/cancel`, {})}>Cancel call</button>` : ''}</td>
      </tr>`)}</tbody></table></div>
    ${(r.log ?? []).length ? html`<ol class="log" data-testid="run-log">${r.log.map((l) => html`<li><span class="muted">${when(l.at)}</span> ${l.kind === 'log' ? '' : html`<b>${l.kind}</b> `}${l.text}</li>`)}</ol>` : ''}
  </div>`;
}
