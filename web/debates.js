// The Debates view: each debate with its outcome, and the one chosen whole — every round's two
// positions with their verdicts (each turn opens its agent panel), the post-action, review and
// response, the final note — and cancel while it runs.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { enc, post } from './api.js';
import { useLive } from './hooks.js';
import { tone, usd, when } from './format.js';

const debateTone = (s) => ({ consensus: 'ok', disagreement: 'need', running: 'run', failed: 'bad', cancelled: 'off' }[s] ?? 'off');
const sides = (d) => d.sides.map((s) => `${s.side}: ${s.provider}${s.model ? ` ${s.model}` : ''}`).join(' vs ');

function Turn({ t, onOpen }) {
  return html`<div class="debate-turn" data-side=${t.side}>
    <h4><span class=${`dot ${tone(t.job_status ?? t.status)}`}></span>Side ${t.side}${t.verdict ? html` · <strong data-testid="verdict">${t.verdict}</strong>` : ''}
      <button class="link" onClick=${() => onOpen(t.job_id)}>${t.job_id}</button></h4>
    ${t.status === 'done' ? html`<pre class="note-value">${t.position ?? t.text ?? ''}</pre>
      ${t.reasoning ? html`<details><summary>reasoning</summary><pre class="note-value">${t.reasoning}</pre></details>` : ''}
      ${t.open_points?.length ? html`<ul>${t.open_points.map((p) => html`<li>${p}</li>`)}</ul>` : ''}`
      : html`<p class="muted">${t.status}${t.error ? `: ${t.error}` : ''}</p>`}
  </div>`;
}

function Detail({ id, tick, onOpen, say }) {
  const { data, error, reload } = useLive(`/api/web/debates/${enc(id)}`, tick);
  if (error && !data) return html`<p class="error">${error}</p>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const d = data.debate;
  const cancel = async () => {
    try { await post(`/api/web/debates/${enc(id)}/cancel`, {}); say(`debate ${id} cancelled`); reload(); } catch (e) { say(e.message, true); }
  };
  return html`<article class="wf-detail" data-testid="debate" data-debate=${d.debate_id} data-status=${d.status}>
    <h2><span class=${`dot ${debateTone(d.status)}`}></span>${d.title}</h2>
    <p class="muted">${d.debate_id} · ${d.status} · ${sides(d)} · round ${d.round} of ${d.max_rounds}${d.loops > 1 ? ` · loop ${d.loop} of ${d.loops}` : ''} · ${usd(d.cost_usd)} · started ${when(d.created_at)}${d.ended_at ? ` · ended ${when(d.ended_at)}` : ''}</p>
    ${d.error ? html`<p class="banner bad" data-testid="debate-error">${d.error}</p>` : ''}
    ${d.status === 'running' ? html`<div class="actions"><button class="danger" onClick=${() => { if (confirm(`Cancel debate "${d.title}"?`)) cancel(); }}>Cancel debate</button></div>` : ''}
    <h3>Task</h3><pre class="note-value">${d.task}</pre>
    ${d.rounds.map((r) => html`<section class="debate-round" data-round=${r.round}>
      <h3>${d.loops > 1 ? `Loop ${r.loop}, round ${r.round}` : `Round ${r.round}`}</h3>
      ${r.turns.map((t) => html`<${Turn} t=${t} onOpen=${onOpen} />`)}
    </section>`)}
    ${d.post.length ? html`<h3>After the rounds</h3>${d.post.map((p) => html`<section class="debate-post" data-kind=${p.kind}><h4>${p.kind.replace('_', '-')}${d.loops > 1 ? ` (loop ${p.loop})` : ''}</h4><${Turn} t=${p} onOpen=${onOpen} /></section>`)}` : ''}
    ${data.final ? html`<h3>Final note</h3><pre class="note-value" data-testid="debate-final">${data.final}</pre>` : ''}
    ${d.branch ? html`<p class="muted">branch ${d.branch}</p>` : ''}
  </article>`;
}

export default function Debates({ tick, onOpen, say }) {
  const { data, error } = useLive('/api/web/debates', tick);
  const [sel, setSel] = useState(null);
  if (error && !data) return html`<p class="error">${error}</p>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  if (!data.debates.length) return html`<p class="muted">No debates yet. The lead starts one with start_debate.</p>`;
  const chosen = sel ?? data.debates[0].debate_id;
  return html`<div class="split">
    <ul class="rows" data-nav-group aria-label="Debates">${data.debates.map((d) => html`<li>
      <button class=${`item nav-item${d.debate_id === chosen ? ' selected' : ''}`} data-debate=${d.debate_id} onClick=${() => setSel(d.debate_id)} aria-pressed=${d.debate_id === chosen}>
        <span class="title"><span class=${`dot ${debateTone(d.status)}`}></span>${d.title}</span>
        <span class="meta">${d.status} · ${sides(d)} · round ${d.round}/${d.max_rounds}</span>
      </button></li>`)}</ul>
    <${Detail} key=${chosen} id=${chosen} tick=${tick} onOpen=${onOpen} say=${say} />
  </div>`;
}
