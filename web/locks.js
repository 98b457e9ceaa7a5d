// The Locks view: each held file with its holder (opens the agent), why, since when and until
// when (a live countdown), who waits for it; and each waiting agent with the files it waits for
// and who holds them.
import { html } from 'htm/preact';
import { useLive } from './hooks.js';
import { ago, when } from './format.js';

const Who = ({ id, title, onOpen }) => (id === 'lead' ? html`<b>the lead</b>` : html`<button class="link nav-item" data-job=${id} onClick=${() => onOpen(id)}>${title ?? id}</button>`);

export default function Locks({ tick, floor, onOpen }) {
  const { data, error } = useLive('/api/web/locks', tick);
  if (error && !data) return html`<p class="error">${error}</p>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const now = floor?.at ?? Date.now();
  return html`<div class="locks" data-nav-group>
    <h2>Held <span class="count">${data.locks.length}</span></h2>
    ${data.locks.length ? html`<div class="scroll-x"><table data-testid="locks"><thead><tr><th>file</th><th>holder</th><th>why</th><th>since</th><th>expires</th><th>waiting</th></tr></thead>
      <tbody>${data.locks.map((l) => html`<tr data-path=${l.path} data-holder=${l.holder}>
        <td class="path">${l.path}</td><td><${Who} id=${l.holder} title=${l.holder_title} onOpen=${onOpen} /></td><td>${l.reason ?? ''}</td>
        <td class="num">${when(l.acquired_at)}</td><td class="num">in ${ago(Date.parse(l.expires_at) - now)}</td>
        <td>${l.waiters.map((w, i) => html`${i ? ', ' : ''}<${Who} id=${w.job_id} title=${w.title} onOpen=${onOpen} />`)}</td></tr>`)}</tbody></table></div>`
      : html`<p class="muted">No file is locked.</p>`}
    <h2>Waiting <span class="count">${data.waits.length}</span></h2>
    ${data.waits.length ? html`<ul class="rows">${data.waits.map((w) => html`<li data-waiter=${w.job_id}><${Who} id=${w.job_id} title=${w.title} onOpen=${onOpen} /> waits since ${when(w.since)}${w.reason ? ` (${w.reason})` : ''} for
      ${w.paths.map((p, i) => html`${i ? ', ' : ''}<code>${p}</code>`)}${w.blocked_by.length ? html` — held by ${w.blocked_by.map((b, i) => html`${i ? ', ' : ''}<${Who} id=${b.holder} title=${b.holder_title} onOpen=${onOpen} />`)}` : ''}</li>`)}</ul>`
      : html`<p class="muted">Nobody waits for a lock.</p>`}
  </div>`;
}
