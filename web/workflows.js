// The Workflows view: each workflow with its bar (milestones · cycle · phase), and the one chosen
// whole — the hub's milestone checklist (who checked each off, in which cycle), its worklogs and
// contract, why it is blocked, its phase jobs (each opens the agent panel), and resume/cancel.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { enc, post } from './api.js';
import { useLive } from './hooks.js';
import { tone, when } from './format.js';

function Detail({ id, tick, onOpen, say }) {
  const { data, error, reload } = useLive(`/api/web/workflows/${enc(id)}`, tick);
  const [phase, setPhase] = useState('');
  if (error && !data) return html`<p class="error">${error}</p>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const w = data.workflow;
  const act = async (what, body) => {
    try { await post(`/api/web/workflows/${enc(id)}/${what}`, body); say(`workflow ${id}: ${what} done`); reload(); } catch (e) { say(e.message, true); }
  };
  const live = w.status === 'running' || w.status === 'waiting_approval';
  return html`<article class="wf-detail" data-testid="workflow" data-workflow=${w.workflow_id} data-status=${w.status}>
    <h2><span class=${`dot ${tone(w.status)}`}></span>${w.title}</h2>
    <p class="muted">${w.workflow_id} · ${w.status} · phase ${w.phase} · cycle ${w.cycle} of ${w.max_cycles} · ${w.milestones_done}/${w.milestones_total} milestones · started ${when(w.created_at)}${w.ended_at ? ` · ended ${when(w.ended_at)}` : ''}</p>
    ${w.blocked_reason ? html`<p class="banner bad" data-testid="blocked">Blocked — ${w.blocked_reason.code}: ${w.blocked_reason.message} (phase ${w.blocked_reason.phase}, cycle ${w.blocked_reason.cycle})${w.blocked_reason.job_id ? html` <button onClick=${() => onOpen(w.blocked_reason.job_id)}>Open ${w.blocked_reason.job_id}</button>` : ''}</p>` : ''}
    <div class="actions">
      ${w.status !== 'succeeded' ? html`<form onSubmit=${(e) => { e.preventDefault(); if (confirm(`Resume workflow "${w.title}"${phase ? ` from ${phase}` : ''}?`)) act('resume', { ...(phase ? { phase } : {}), ...(live ? { force: true } : {}) }); }}>
        <select aria-label="Resume from phase" value=${phase} onChange=${(e) => setPhase(e.target.value)}><option value="">from phase ${w.phase}</option><option value="assess">assess</option><option value="review">review</option><option value="implement">implement</option></select>
        <button>${live ? 'Restart' : 'Resume'}</button></form>` : ''}
      ${live ? html`<button class="danger" onClick=${() => { if (confirm(`Cancel workflow "${w.title}"?`)) act('cancel', {}); }}>Cancel workflow</button>` : ''}
    </div>
    <h3>Milestones</h3>
    ${data.milestones.length ? html`<ul class="milestones" data-testid="milestones">${data.milestones.map((m) => html`<li class=${m.done ? 'done' : ''}>
      <input type="checkbox" checked=${m.done} disabled aria-label=${m.done ? 'done' : 'open'} /> ${m.text}${m.done && m.cycle !== null ? html` <span class="muted">cycle ${m.cycle}${m.job ? html` · <a href="#" onClick=${(e) => { e.preventDefault(); onOpen(m.job); }}>${m.job}</a>` : ''}</span>` : ''}</li>`)}</ul>` : html`<p class="muted">No plan yet (the assess phase writes it).</p>`}
    <h3>Phases</h3>
    <ol class="phases" data-nav-group>${w.jobs.map((j) => html`<li><button class="link nav-item" data-job=${j.job_id} onClick=${() => onOpen(j.job_id)}><span class=${`dot ${tone(j.status)}`}></span>${j.phase} · cycle ${j.cycle} · ${j.status}${j.failure_class ? ` (${j.failure_class})` : ''} · ${j.job_id}</button></li>`)}</ol>
    ${data.contract ? html`<h3>Contract</h3><pre class="note-value">${data.contract}</pre>` : ''}
    <h3>Worklogs</h3>
    ${data.worklogs.length ? data.worklogs.map((l) => html`<details class="worklog"><summary>cycle ${l.cycle} · ${l.phase} <span class="muted">${when(l.updated_at)}</span></summary><pre class="note-value">${l.value}</pre></details>`) : html`<p class="muted">None yet.</p>`}
    ${w.branch ? html`<p class="muted">branch ${w.branch}${w.pr_url ? html` · <a href=${w.pr_url} rel="noreferrer">${w.pr_url}</a>` : ''}</p>` : ''}
  </article>`;
}

export default function Workflows({ tick, onOpen, say }) {
  const { data, error } = useLive('/api/web/workflows', tick);
  const [sel, setSel] = useState(null);
  if (error && !data) return html`<p class="error">${error}</p>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  if (!data.workflows.length) return html`<p class="muted">No workflows yet. The lead starts one with start_workflow.</p>`;
  const chosen = sel ?? data.workflows[0].workflow_id;
  return html`<div class="split">
    <ul class="rows" data-nav-group aria-label="Workflows">${data.workflows.map((w) => html`<li>
      <button class=${`item nav-item${w.workflow_id === chosen ? ' selected' : ''}`} data-workflow=${w.workflow_id} onClick=${() => setSel(w.workflow_id)} aria-pressed=${w.workflow_id === chosen}>
        <span class="title"><span class=${`dot ${tone(w.status)}`}></span>${w.title}</span>
        <span class="meta">${w.status} · ${w.milestones_done}/${w.milestones_total} · cycle ${w.cycle} · ${w.phase}</span>
        <progress max=${Math.max(1, w.milestones_total)} value=${w.milestones_done}></progress>
      </button></li>`)}</ul>
    <${Detail} key=${chosen} id=${chosen} tick=${tick} onOpen=${onOpen} say=${say} />
  </div>`;
}
