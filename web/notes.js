// The Notes view: every note (key, version, author, when, the start of its value), live — a note
// written by an agent shows up at once, its row marked — and one note's whole value on demand.
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { enc, get } from './api.js';
import { useLive } from './hooks.js';
import { when } from './format.js';

function Value({ k, version }) {
  const [v, setV] = useState(null);
  useEffect(() => { get(`/api/web/note?key=${enc(k)}`).then((n) => setV(n.value), (e) => setV(`(${e.message})`)); }, [k, version]);
  return html`<pre class="note-value">${v ?? 'Loading…'}</pre>`;
}

export default function Notes({ tick, onOpen }) {
  const [prefix, setPrefix] = useState('');
  const [open, setOpen] = useState(null);
  const { data, error } = useLive(`/api/web/notes${prefix ? `?prefix=${enc(prefix)}` : ''}`, tick);
  const seen = useRef(new Map());
  const changed = new Set();
  if (data) {
    for (const n of data.notes) if (seen.current.has(n.key) && seen.current.get(n.key) !== n.version) changed.add(n.key);
  }
  useEffect(() => { if (data) seen.current = new Map(data.notes.map((n) => [n.key, n.version])); }, [data]);
  return html`<div class="notes">
    <div class="toolbar"><input type="search" placeholder="Key prefix, e.g. plan/" aria-label="Key prefix" value=${prefix} onInput=${(e) => setPrefix(e.target.value)} />
      <span class="muted">${data ? `${data.notes.length}${data.next_cursor ? '+' : ''} note${data.notes.length === 1 ? '' : 's'}` : error ?? 'Loading…'}</span></div>
    ${data && !data.notes.length ? html`<p class="muted">No notes${prefix ? ` under ${prefix}` : ' yet'}.</p>` : ''}
    <ul class="rows" data-nav-group data-testid="notes">${(data?.notes ?? []).map((n) => html`<li class=${`note-row${changed.has(n.key) ? ' flash' : ''}`} data-key=${n.key} data-version=${n.version}>
      <button class="item nav-item" aria-expanded=${open === n.key} onClick=${() => setOpen(open === n.key ? null : n.key)}>
        <span class="title"><code>${n.key}</code> <span class="muted">v${n.version}</span></span>
        <span class="meta">${n.author.startsWith('j-') ? (n.author_title ?? n.author) : n.author} · ${when(n.updated_at)} · ${n.chars} chars</span>
        ${open === n.key ? '' : html`<span class="last">${n.preview}</span>`}
      </button>
      ${n.author.startsWith('j-') && open === n.key ? html`<button class="link" onClick=${() => onOpen(n.author)}>open ${n.author}</button>` : ''}
      ${open === n.key ? html`<${Value} k=${n.key} version=${n.version} />` : ''}
    </li>`)}</ul>
  </div>`;
}
