// The Runs view (docs/dispatch.md, docs/scripts.md): each run with its kind, status and counts,
// and the one chosen whole — a dispatch run: why it stopped, each task with its status,
// dependencies and job (opens the agent panel); a script run: its calls, log and verbs
// (web/scriptRun.js) — and resume for an ended run that did not succeed.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { enc, post } from './api.js';
import { useLive } from './hooks.js';
import { tone, usd, when } from './format.js';
import { runMeta, ScriptRun } from './scriptRun.js';

const counts = (c) => Object.entries(c).map(([k, n]) => `${n} ${k}`).join(' · ');

function Detail({ id, tick, onOpen, say }) {
  const { data, error, reload } = useLive(`/api/web/runs/${enc(id)}`, tick);
  if (error && !data) return html`<p class="error">${error}</p>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const r = data;
  const resume = async () => {
    try { await post(`/api/web/runs/${enc(r.run_id)}/resume`, {}); say?.(`Run ${r.run_id} resumed`); reload(); } catch (e) { say?.(e.message, true); }
  };
  if (r.kind === 'script') {
    return html`<article class="detail" data-run=${r.run_id}>
      <h2><span class=${`dot ${tone(r.status)}`}></span>${r.title} <span class="muted">${r.run_id} · script · since ${when(r.created_at)}</span></h2>
      <${ScriptRun} run=${r} onOpen=${onOpen} say=${say} done=${reload} />
      ${r.status !== 'running' && r.status !== 'succeeded' ? html`<p><button onClick=${resume}>Resume what did not succeed</button></p>` : ''}
    </article>`;
  }
  return html`<article class="detail" data-run=${r.run_id}>
    <h2><span class=${`dot ${tone(r.status)}`}></span>${r.title} <span class="muted">${r.run_id}</span></h2>
    <p class="muted">${r.status} · ${counts(r.counts)} · ${usd(r.cost_usd)} · since ${when(r.created_at)}${r.file ? ` · ${r.file}` : ''}</p>
    ${r.note ? html`<p class="banner bad" data-testid="run-note">${r.note}</p>` : ''}
    ${r.status !== 'running' && r.status !== 'succeeded' ? html`<p><button onClick=${resume}>Resume what did not succeed</button></p>` : ''}
    <div class="scroll-x"><table data-testid="run-tasks" data-nav-group><thead><tr><th>task</th><th>status</th><th>after</th><th>job</th><th>cost</th><th>why</th></tr></thead>
      <tbody>${r.tasks.map((t) => html`<tr data-task=${t.task_id}>
        <td>${t.task_id}${t.title ? html` <span class="muted">${t.title}</span>` : ''}</td>
        <td><span class=${`dot ${tone(t.status)}`}></span>${t.status}</td>
        <td>${(t.depends_on ?? []).join(', ')}</td>
        <td>${t.job_id ? html`<button class="link nav-item" data-job=${t.job_id} onClick=${() => onOpen(t.job_id)}>${t.job_id}</button>` : '—'}</td>
        <td class="num">${t.cost_usd !== undefined ? usd(t.cost_usd) : ''}</td>
        <td>${t.error ?? ''}</td></tr>`)}</tbody></table></div>
  </article>`;
}

export default function Runs({ tick, onOpen, say }) {
  const { data, error } = useLive('/api/web/runs', tick);
  const [sel, setSel] = useState(null);
  if (error && !data) return html`<p class="error">${error}</p>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  if (!data.runs.length) return html`<p class="muted">No runs yet. Start one with overseer dispatch tasks.toml or overseer dispatch script.js (or the lead's dispatch and run_script tools).</p>`;
  const chosen = sel ?? data.runs[0].run_id;
  return html`<div class="split">
    <ul class="rows" data-nav-group aria-label="Runs">${data.runs.map((r) => html`<li>
      <button class=${`item nav-item${r.run_id === chosen ? ' selected' : ''}`} data-run=${r.run_id} onClick=${() => setSel(r.run_id)} aria-pressed=${r.run_id === chosen}>
        <span class="title"><span class=${`dot ${tone(r.status)}`}></span>${r.title}</span>
        <span class="meta">${r.kind === 'script' ? `script · ${runMeta(r)}` : `${r.status} · ${counts(r.counts)} · ${usd(r.cost_usd)}`}</span>
      </button></li>`)}</ul>
    <${Detail} key=${chosen} id=${chosen} tick=${tick} onOpen=${onOpen} say=${say} />
  </div>`;
}
