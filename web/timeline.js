// The Timeline view: a Gantt of the most recent jobs — a row per job (indented under its
// parent), a bar per attempt coloured by how it ended, a thin bar for the time it queued or
// waited before its first attempt, and "now". Bars open the agent panel at that attempt.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { useLive } from './hooks.js';
import { ago, tone, when } from './format.js';

const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map((s) => s * 1000);

/** Tick marks: a round step giving at most ~6 of them. */
export function ticks(t0, t1) {
  const step = STEPS.find((s) => (t1 - t0) / s <= 6) ?? 86_400_000 * Math.ceil((t1 - t0) / 86_400_000 / 6);
  const out = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) out.push(t);
  return { step, ticks: out };
}

export default function Timeline({ tick, onOpen }) {
  const [limit, setLimit] = useState(50);
  const { data, error } = useLive(`/api/web/timeline?limit=${limit}`, tick, 1000);
  if (error && !data) return html`<p class="error">${error}</p>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  if (!data.jobs.length) return html`<p class="muted">No jobs yet.</p>`;
  const now = Date.parse(data.now);
  const t = (s) => (s ? Date.parse(s) : now);
  const t0 = Math.min(...data.jobs.map((j) => t(j.created_at)));
  const t1 = Math.max(now, ...data.jobs.map((j) => t(j.ended_at)));
  const span = Math.max(1000, t1 - t0);
  const pct = (x) => `${(((x - t0) / span) * 100).toFixed(3)}%`;
  const width = (a, b) => `${Math.max(0.25, ((b - a) / span) * 100).toFixed(3)}%`;
  const { step, ticks: marks } = ticks(t0, t1);
  const label = (x) => (step < 60_000 ? new Date(x).toLocaleTimeString([], { hour12: false }) : new Date(x).toLocaleTimeString([], { hour12: false, hour: '2-digit', minute: '2-digit' }));
  return html`<div class="timeline">
    <div class="toolbar"><label>Jobs <select value=${limit} onChange=${(e) => setLimit(Number(e.target.value))}>${[20, 50, 100, 200].map((n) => html`<option value=${n}>last ${n}</option>`)}</select></label>
      <span class="muted">${when(t0)} → now · ${ago(span)}</span>
      <span class="legend">${['running', 'succeeded', 'failed', 'cancelled', 'interrupted'].map((s) => html`<span><i class=${`sw ${tone(s)}`}></i>${s}</span>`)}</span></div>
    <div class="tl" role="table" aria-label="Attempts over time" data-nav-group>
      <div class="tl-row tl-axis" role="row"><span class="tl-label" role="columnheader">job</span><span class="tl-track" role="columnheader">
        ${marks.map((m) => html`<span class="tl-tick" style=${`left:${pct(m)}`}>${label(m)}</span>`)}<span class="tl-now" style=${`left:${pct(now)}`} title="now"></span></span></div>
      ${data.jobs.map((j) => {
        const first = j.attempts[0] ? t(j.attempts[0].started_at) : j.ended_at ? t(j.ended_at) : now;
        return html`<div class="tl-row" role="row" data-job=${j.job_id}>
          <button class="tl-label link nav-item" role="rowheader" style=${`--depth:${Math.max(0, j.depth - 1)}`} onClick=${() => onOpen(j.job_id)} title=${`${j.title} (${j.job_id}) · ${j.status}`}><span class=${`dot ${tone(j.status)}`}></span>${j.title}</button>
          <span class="tl-track" role="cell">
            ${first > t(j.created_at) ? html`<span class="tl-wait" style=${`left:${pct(t(j.created_at))};width:${width(t(j.created_at), first)}`} title=${`queued/waiting ${ago(first - t(j.created_at))}`}></span>` : ''}
            ${j.attempts.map((a) => html`<button class=${`tl-bar ${tone(a.status)}`} data-attempt=${a.n} data-status=${a.status} style=${`left:${pct(t(a.started_at))};width:${width(t(a.started_at), t(a.ended_at))}`}
              aria-label=${`${j.title}: attempt ${a.n} (${a.kind}) ${a.status}, ${ago(t(a.ended_at) - t(a.started_at))}`}
              title=${`attempt ${a.n} · ${a.kind} · ${a.status}${a.failure_class ? ` (${a.failure_class})` : ''} · ${when(a.started_at)} → ${a.ended_at ? when(a.ended_at) : 'now'} · ${a.turns} turns · $${a.cost_usd.toFixed(4)}`}
              onClick=${() => onOpen(j.job_id, a.n)}>${a.n > 1 || j.attempts.length > 1 ? a.n : ''}</button>`)}
          </span></div>`;
      })}
    </div></div>`;
}
