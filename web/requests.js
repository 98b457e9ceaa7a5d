// The Requests view: every request an agent opened (approvals, questions, permission prompts),
// pending first, with who may answer, the answer, who gave it and when, and late answers that
// were ignored. Pending ones are answered here as on the Crew view (channel "web").
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { useLive } from './hooks.js';
import { Answer, Plan } from './crew.js';
import { tone, when } from './format.js';

export default function Requests({ tick, onOpen, say }) {
  const [status, setStatus] = useState('all');
  const { data, error } = useLive(`/api/requests?status=${status}`, tick);
  if (error && !data) return html`<p class="error">${error}</p>`;
  const rows = data ? [...data.requests].sort((a, b) => (a.status === 'pending') !== (b.status === 'pending') ? (a.status === 'pending' ? -1 : 1) : b.created_at.localeCompare(a.created_at)) : [];
  return html`<div class="requests">
    <div class="toolbar"><label>Show <select value=${status} onChange=${(e) => setStatus(e.target.value)}>
      ${['all', 'pending', 'answered', 'timed_out', 'cancelled'].map((s) => html`<option value=${s}>${s.replace('_', ' ')}</option>`)}</select></label>
      <span class="muted">${data ? `${rows.length} request${rows.length === 1 ? '' : 's'}` : 'Loading…'}</span></div>
    ${data && !rows.length ? html`<p class="muted">No requests${status === 'all' ? ' yet' : ` ${status.replace('_', ' ')}`}.</p>` : ''}
    <ul class="rows" data-nav-group>${rows.map((r) => html`<li class=${`request ${tone(r.status)}`} data-request=${r.request_id} data-status=${r.status}>
      <div class="head"><span class=${`dot ${tone(r.status)}`}></span><b>${r.kind}</b> · ${r.status}${r.decision ? ` (${r.decision})` : ''} · for ${r.who === 'any' ? 'the lead or you' : r.who === 'person' ? 'you only' : 'the lead'}
        · <button class="link nav-item" data-job=${r.job_id} onClick=${() => onOpen(r.job_id)}>${r.agent_title ?? r.job_id}</button> <span class="muted">${when(r.created_at)}</span></div>
      <div class="text">${r.summary}</div>
      <${Plan} plan=${r.plan} />
      ${r.tool_name ? html`<div class="muted">tool ${r.tool_name}${r.tool_input ? html` <code>${JSON.stringify(r.tool_input).slice(0, 300)}</code>` : ''}</div>` : ''}
      ${r.options?.length ? html`<div class="muted">options: ${r.options.join(' · ')}</div>` : ''}
      ${r.status === 'pending' ? html`<div class="row"><${Answer} request=${r} say=${say} />${r.expires_at ? html`<span class="muted">times out ${when(r.expires_at)}</span>` : ''}</div>`
        : html`<div class="answered">${r.answer ? html`answer: <b>${r.answer}</b> · ` : ''}${r.comment ? `comment: ${r.comment} · ` : ''}${r.answered_by ? `by ${r.answered_by}` : ''}${r.answered_at ? ` at ${when(r.answered_at)}` : ''}</div>`}
      ${(r.late_answers ?? []).map((l) => html`<div class="muted">late: ${l.decision ?? l.answer ?? ''} by ${l.answered_by} — ${l.note}</div>`)}
    </li>`)}</ul>
  </div>`;
}
