// The Search view: what the agents said (assistant text, tool calls and results of every
// attempt, through the hub's transcript index: GET /api/search), newest first. A result opens
// the agent panel at that attempt with the matching lines marked.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { enc, get } from './api.js';
import { when } from './format.js';

/** The snippet with its «matches» as <mark>. */
const marked = (s) => s.split(/(«[^»]*»)/).map((p) => (p.startsWith('«') ? html`<mark>${p.slice(1, -1)}</mark>` : p));
const termsOf = (s) => [...s.matchAll(/«([^»]*)»/g)].map((m) => m[1]);

export default function Search({ q, onOpen, epoch }) {
  const [since, setSince] = useState('');
  const [res, setRes] = useState(null);
  const [err, setErr] = useState('');
  useEffect(() => {
    if (!q) { setRes(null); return; }
    let live = true;
    setErr('');
    get(`/api/search?q=${enc(q)}&limit=50${since ? `&since=${since}` : ''}`).then((r) => { if (live) setRes(r); }, (e) => { if (live) { setRes(null); setErr(e.message); } });
    return () => { live = false; };
  }, [q, since, epoch]);
  return html`<div class="search-view">
    <div class="toolbar"><span>${q ? html`Results for <b>${q}</b>` : 'Type in the search box above ( / ) and press Enter: words, "a phrase", word*, OR, -word.'}</span>
      <label>Since <select value=${since} onChange=${(e) => setSince(e.target.value)}><option value="">any time</option><option value="1h">1 hour</option><option value="24h">24 hours</option><option value="7d">7 days</option></select></label>
      ${res ? html`<span class="muted">${res.total_hint >= 1000 ? '1000+' : res.total_hint} match${res.total_hint === 1 ? '' : 'es'} · ${res.took_ms} ms</span>` : ''}</div>
    ${err ? html`<p class="error">${err}</p>` : ''}
    ${res?.indexing ? html`<p class="warn">${res.indexing}</p>` : ''}
    ${res && !res.results.length ? html`<p class="muted">Nothing matches.</p>` : ''}
    <ul class="rows" data-nav-group data-testid="search-results">${(res?.results ?? []).map((h) => html`<li>
      <button class="item nav-item" data-job=${h.job_id} data-attempt=${h.attempt} onClick=${() => onOpen(h.job_id, h.attempt, termsOf(h.snippet))}>
        <span class="title">${h.title || h.job_id}</span>
        <span class="meta">${h.job_id} · attempt ${h.attempt} · ${h.kind}${h.tool ? ` ${h.tool}` : ''} · ${when(h.at)}</span>
        <span class="snippet">${marked(h.snippet)}</span>
      </button></li>`)}</ul>
    ${res?.omitted ? html`<p class="muted">${res.omitted} more left out: narrow the search.</p>` : ''}
  </div>`;
}
