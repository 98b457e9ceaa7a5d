// The agent panel: Output (streaming, readable), Changes (per file, coloured), Details
// (attempts, warnings, events, requests) and the actions on the job.
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, post, outputStream } from './api.js';
import { ago, usd, tokens, tone } from './format.js';

function Output({ job }) {
  const [lines, setLines] = useState([]);
  const box = useRef(null);
  useEffect(() => {
    setLines([]);
    return outputStream(job.job_id, (c) => setLines((old) => (c.lines.length ? [...old, ...c.lines].slice(-2000) : old)));
  }, [job.job_id]);
  useEffect(() => { const b = box.current; if (b) b.scrollTop = b.scrollHeight; }, [lines.length]);
  return html`<pre class="output" ref=${box} data-testid="output" tabindex="0">${lines.map((l) => html`<div class=${l.includes('tool_use ') ? 'line tool' : 'line'}>${l}</div>`)}</pre>`;
}

function Changes({ job }) {
  const [diff, setDiff] = useState(null);
  const [err, setErr] = useState('');
  useEffect(() => { setDiff(null); get(`/api/web/jobs/${encodeURIComponent(job.job_id)}/diff`).then(setDiff, (e) => setErr(e.message)); }, [job.job_id, job.status]);
  if (err) return html`<p class="error">${err}</p>`;
  if (!diff) return html`<p class="muted">Loading the diff…</p>`;
  return html`<div class="changes" data-testid="changes"><p class="muted">${diff.title}</p>
    ${!diff.files.length && !diff.untracked.length ? html`<p>No changes.</p>` : ''}
    ${diff.untracked.length ? html`<p>New, untracked: ${diff.untracked.join(', ')}</p>` : ''}
    ${diff.files.map((f) => html`<details open><summary>${f.path}</summary><pre class="diff">${f.patch.split('\n').map((l) => html`<div class=${l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : l.startsWith('@@') ? 'hunk' : ''}>${l}</div>`)}</pre></details>`)}
  </div>`;
}

function Details({ job }) {
  const [d, setD] = useState(null);
  useEffect(() => { get(`/api/web/jobs/${encodeURIComponent(job.job_id)}`).then(setD, () => setD(null)); }, [job.job_id, job.status, job.turns]);
  if (!d) return html`<p class="muted">Loading…</p>`;
  return html`<div class="details" data-testid="details"><dl>
    <dt>status</dt><dd>${d.status}${d.failure_class ? ` (${d.failure_class})` : ''}</dd>
    <dt>provider</dt><dd>${d.provider}${d.model ? ` · ${d.model}` : ''}</dd>
    <dt>cost</dt><dd>${d.cost_usd === null ? 'unknown (unpriced model)' : `$${d.cost_usd}`} · ${tokens(d.input_tokens)} in · ${tokens(d.output_tokens)} out</dd>
    ${d.branch ? html`<dt>branch</dt><dd>${d.branch}</dd>` : ''}
    ${d.pr_url ? html`<dt>PR</dt><dd><a href=${d.pr_url} rel="noreferrer">${d.pr_url}</a></dd>` : ''}
    ${d.result ? html`<dt>result</dt><dd class="pre">${d.result}</dd>` : ''}
    ${d.error ? html`<dt>error</dt><dd class="pre">${d.error}</dd>` : ''}
    ${(d.warnings ?? []).map((w) => html`<dt>warning</dt><dd class="warn">${w.kind}: ${w.detail}</dd>`)}
  </dl>
  <h4>Attempts</h4><ol>${d.attempts.map((a) => html`<li>${a.kind} · ${a.status}${a.failure_class ? ` (${a.failure_class})` : ''} · ${a.turns} turns · $${a.cost_usd}${a.error ? ` — ${a.error}` : ''}</li>`)}</ol>
  <h4>Events</h4><ol class="events">${(d.events ?? []).map((e) => html`<li><time>${e.at?.slice(11, 19)}</time> ${e.kind} ${e.data ? JSON.stringify(e.data).slice(0, 160) : ''}</li>`)}</ol></div>`;
}

const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

export function AgentPanel({ job, onClose, say }) {
  const [tab, setTab] = useState('output');
  const [text, setText] = useState('');
  const act = async (what, body) => {
    try { await post(`/api/web/jobs/${encodeURIComponent(job.job_id)}/${what}`, body); say(`${what}: done`); } catch (e) { say(e.message, true); }
  };
  const ended = ENDED.has(job.status);
  return html`<aside class="panel" aria-label=${`Agent ${job.title}`} data-testid="panel">
    <header><h2><span class=${`dot ${tone(job.status)}`}></span>${job.title}</h2>
      <p class="muted">${job.job_id} · ${job.status} · ${job.provider}${job.model ? `/${job.model}` : ''} · ${ago(job.elapsed_ms)} · ${job.turns} turns · ${usd(job.cost_usd, job.cost_unknown)}</p>
      <button class="close" onClick=${onClose} aria-label="Close the panel">×</button></header>
    <div class="actions">
      ${!ended ? html`<form onSubmit=${(e) => { e.preventDefault(); if (text.trim()) { act('message', { text }); setText(''); } }}>
        <input aria-label="Message to the agent" placeholder="Message…" value=${text} onInput=${(e) => setText(e.target.value)} /><button>Send</button></form>` : ''}
      ${job.status === 'running' ? html`<button onClick=${() => act('pause', { mode: 'freeze' })}>Pause</button>` : ''}
      ${job.status === 'frozen' || job.status === 'interrupted' ? html`<button onClick=${() => act('resume', {})}>Resume</button>` : ''}
      ${!ended ? html`<button class="danger" onClick=${() => { if (confirm(`Cancel "${job.title}" and its sub-agents?`)) act('cancel', {}); }}>Cancel</button>` : ''}
    </div>
    <nav role="tablist">${['output', 'changes', 'details'].map((t) => html`<button role="tab" aria-selected=${tab === t} onClick=${() => setTab(t)}>${t[0].toUpperCase() + t.slice(1)}</button>`)}</nav>
    ${tab === 'output' ? html`<${Output} job=${job} />` : tab === 'changes' ? html`<${Changes} job=${job} />` : html`<${Details} job=${job} />`}
  </aside>`;
}
