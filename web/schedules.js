// The Schedules view (docs/schedules.md): every schedule (spawn_agent with at, every_s or cron)
// with how it repeats, its runs so far, its next run and why it ended, filtered by status; the
// one chosen whole — its occurrences (each opens the agent panel) — and Cancel while it is active
// (cancel_schedule: no further run, a run waiting for its time is cancelled).
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { enc, post } from './api.js';
import { useLive } from './hooks.js';
import { tone, when } from './format.js';

const STATUSES = ['active', 'done', 'stopped', 'cancelled'];
const schedTone = (s) => ({ active: 'run', done: 'ok', stopped: 'bad', cancelled: 'off' }[s] ?? 'off');
const At = ({ t }) => (t ? html`<time datetime=${t} title=${t}>${when(t)}</time>` : '—');
const runs = (s) => `${s.runs}${s.max_runs !== null ? ` / ${s.max_runs}` : ''} run${s.runs === 1 && s.max_runs === null ? '' : 's'}`;

function Detail({ id, tick, onOpen, say }) {
  const { data, error, reload } = useLive(`/api/web/schedules/${enc(id)}`, tick);
  const [reason, setReason] = useState('');
  if (error && !data) return html`<p class="error">${error}</p>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const s = data.schedule;
  const cancel = async (e) => {
    e.preventDefault();
    if (!confirm(`Cancel schedule "${s.title}"? No further run starts; a run waiting for its time is cancelled.`)) return;
    try {
      const r = await post(`/api/web/schedules/${enc(id)}/cancel`, reason.trim() ? { reason: reason.trim() } : {});
      say(`Schedule ${id} cancelled${r.schedule.note ? `: ${r.schedule.note}` : ''}`);
      setReason('');
      reload();
    } catch (err) { say(err.message, true); }
  };
  return html`<article class="detail" data-testid="schedule" data-schedule=${s.schedule_id} data-status=${s.status}>
    <h2><span class=${`dot ${schedTone(s.status)}`}></span>${s.title} <span class="muted">${s.schedule_id}</span></h2>
    <table><tbody>
      <tr><th>status</th><td data-testid="schedule-status">${s.status}</td></tr>
      <tr><th>repeats</th><td data-testid="schedule-repeat">${s.repeat}</td></tr>
      <tr><th>runs</th><td>${runs(s)}</td></tr>
      <tr><th>first run</th><td><${At} t=${s.first_run_at} /></td></tr>
      <tr><th>until</th><td><${At} t=${s.until} /></td></tr>
      <tr><th>next run</th><td data-testid="schedule-next">${s.next_run_at ? html`<${At} t=${s.next_run_at} />` : '—'}${s.current_job_id ? html` · job <button class="link" data-job=${s.current_job_id} onClick=${() => onOpen(s.current_job_id)}>${s.current_job_id}</button> (${s.current_status})` : ''}</td></tr>
      <tr><th>created</th><td><${At} t=${s.created_at} />${s.ended_at ? html` · ended <${At} t=${s.ended_at} />` : ''}</td></tr>
    </tbody></table>
    ${s.stop_reason ? html`<p class=${`banner${s.status === 'stopped' ? ' bad' : ''}`} data-testid="schedule-stop">${s.status}: ${s.stop_reason}</p>` : ''}
    ${s.status === 'active' ? html`<form class="actions" onSubmit=${cancel}>
      <input aria-label="Reason" placeholder="reason (optional)" maxlength="2000" value=${reason} onInput=${(e) => setReason(e.target.value)} />
      <button class="danger" type="submit">Cancel schedule</button></form>` : ''}
    <h3>Occurrences</h3>
    ${s.occurrences?.length ? html`<div class="scroll-x"><table data-testid="schedule-occurrences" data-nav-group><thead><tr><th>#</th><th>job</th><th>status</th><th>run at</th><th>started</th><th>ended</th></tr></thead>
      <tbody>${s.occurrences.map((o) => html`<tr data-occurrence=${o.n ?? ''} data-status=${o.status}>
        <td class="num">${o.n ?? ''}</td>
        <td><button class="link nav-item" data-job=${o.job_id} onClick=${() => onOpen(o.job_id)}>${o.job_id}</button></td>
        <td><span class=${`dot ${tone(o.status)}`}></span>${o.status}${o.failure_class && o.failure_class !== o.status ? ` (${o.failure_class})` : ''}</td>
        <td><${At} t=${o.run_at} /></td><td><${At} t=${o.started_at} /></td><td><${At} t=${o.ended_at} /></td></tr>`)}</tbody></table></div>`
      : html`<p class="muted">No runs yet.</p>`}
  </article>`;
}

// The filter and the selection outlive the view (back on this tab, it is as it was left).
const kept = { status: '', sel: null };

export default function Schedules({ tick, onOpen, say }) {
  const [status, setStatusState] = useState(kept.status);
  const setStatus = (v) => { kept.status = v; setStatusState(v); };
  const { data, error } = useLive(`/api/web/schedules${status ? `?status=${status}` : ''}`, tick);
  const [sel, setSelState] = useState(kept.sel);
  const setSel = (v) => { kept.sel = v; setSelState(v); };
  const filter = html`<div class="toolbar"><label>Status <select aria-label="Status" data-testid="schedule-filter" value=${status} onChange=${(e) => setStatus(e.target.value)}>
    <option value="">all</option>${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}</select></label></div>`;
  if (error && !data) return html`${filter}<p class="error">${error}</p>`;
  if (!data) return html`${filter}<p class="muted">Loading…</p>`;
  if (!data.schedules.length) return html`${filter}<p class="muted">${status ? `No ${status} schedules.` : 'No schedules yet. The lead makes one with spawn_agent { at, every_s or cron }.'}</p>`;
  const chosen = sel && data.schedules.some((s) => s.schedule_id === sel) ? sel : data.schedules[0].schedule_id;
  return html`${filter}<div class="split">
    <ul class="rows" data-nav-group aria-label="Schedules">${data.schedules.map((s) => html`<li>
      <button class=${`item nav-item${s.schedule_id === chosen ? ' selected' : ''}`} data-schedule=${s.schedule_id} onClick=${() => setSel(s.schedule_id)} aria-pressed=${s.schedule_id === chosen}>
        <span class="title"><span class=${`dot ${schedTone(s.status)}`}></span>${s.title}</span>
        <span class="meta">${s.status} · ${s.repeat} · ${runs(s)}${s.next_run_at ? html` · next <${At} t=${s.next_run_at} />` : ''}${s.until ? html` · until <${At} t=${s.until} />` : ''}</span>
        ${s.stop_reason ? html`<span class="meta">${s.stop_reason}</span>` : ''}
      </button></li>`)}</ul>
    <${Detail} key=${chosen} id=${chosen} tick=${tick} onOpen=${onOpen} say=${say} />
  </div>`;
}
