// The Knowledge base view: browse (project, global or both, by tag), search, and the person's own
// add / edit / delete. Adding goes through the hub's triage (a near-duplicate merges into the
// entry it repeats; a secret or a too-short learning is refused with the reason).
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { enc, get, post } from './api.js';
import { useLive } from './hooks.js';
import { when } from './format.js';

function Form({ entry, onDone, say }) {
  const [title, setTitle] = useState(entry?.title ?? '');
  const [content, setContent] = useState(entry?.content ?? '');
  const [tags, setTags] = useState((entry?.tags ?? []).join(', '));
  const [scope, setScope] = useState('project');
  const submit = async (e) => {
    e.preventDefault();
    const t = tags.split(',').map((x) => x.trim()).filter(Boolean);
    try {
      if (entry) {
        await post(`/api/web/kb/${enc(entry.entry_id)}`, { title, content, tags: t });
        say(`${entry.entry_id} saved`);
      } else {
        const r = await post('/api/web/kb', { title, content, tags: t, scope });
        say(r.status === 'merged' ? `merged into ${r.into} (${r.why})` : `stored ${r.entry_id}`);
      }
      onDone();
    } catch (err) { say(err.message, true); }
  };
  return html`<form class="kb-form" onSubmit=${submit} aria-label=${entry ? `Edit ${entry.entry_id}` : 'Add an entry'}>
    <label>Title <input name="title" required value=${title} onInput=${(e) => setTitle(e.target.value)} /></label>
    <label>What was learned <textarea name="content" required rows="5" value=${content} onInput=${(e) => setContent(e.target.value)}></textarea></label>
    <label>Tags <input name="tags" placeholder="ci, sqlite" value=${tags} onInput=${(e) => setTags(e.target.value)} /></label>
    ${entry ? '' : html`<label>Scope <select name="scope" value=${scope} onChange=${(e) => setScope(e.target.value)}><option value="project">project</option><option value="global">global</option></select></label>`}
    <div class="row"><button class="ok">${entry ? 'Save' : 'Add'}</button><button type="button" onClick=${onDone}>Cancel</button></div>
  </form>`;
}

function Entry({ item, onOpen, say, reload }) {
  const [full, setFull] = useState(null);
  const [editing, setEditing] = useState(false);
  const load = () => get(`/api/web/kb/${enc(item.entry_id)}`).then(setFull, (e) => say(e.message, true));
  const del = async () => {
    if (!confirm(`Delete ${item.entry_id} "${item.title}"?`)) return;
    try { await post(`/api/web/kb/${enc(item.entry_id)}/delete`, {}); say(`${item.entry_id} deleted`); reload(); } catch (e) { say(e.message, true); }
  };
  return html`<li class="kb-entry" data-entry=${item.entry_id}>
    <details onToggle=${(e) => { if (e.currentTarget.open && !full) load(); }}>
      <summary class="nav-item"><b>${item.title}</b> <span class="muted">${item.entry_id} · ${item.scope}${item.tags.length ? ` · ${item.tags.join(', ')}` : ''}${item.updated_at ? ` · ${when(item.updated_at)}` : ''}</span>
        <div class="last">${item.snippet ?? item.preview}</div></summary>
      ${editing && full ? html`<${Form} entry=${full} say=${say} onDone=${() => { setEditing(false); load(); reload(); }} />` : full ? html`<pre class="note-value">${full.content}</pre>
        <p class="muted">${full.source_job ? html`from <button class="link" onClick=${() => onOpen(full.source_job)}>${full.source_job}</button> · ` : ''}${full.merged_count ? `merged ${full.merged_count}× · ` : ''}created ${when(full.created_at)}</p>
        <div class="row"><button onClick=${() => setEditing(true)}>Edit</button><button class="danger" onClick=${del}>Delete</button></div>` : html`<p class="muted">Loading…</p>`}
    </details>
  </li>`;
}

export default function Kb({ tick, onOpen, say }) {
  const [scope, setScope] = useState('all');
  const [q, setQ] = useState('');
  const [asked, setAsked] = useState('');
  const [adding, setAdding] = useState(false);
  const { data, error, reload } = useLive(`/api/web/kb?scope=${scope}${asked ? `&q=${enc(asked)}` : ''}`, tick, 1000);
  const items = data?.hits ?? data?.entries ?? [];
  return html`<div class="kb">
    <div class="toolbar">
      <form role="search" onSubmit=${(e) => { e.preventDefault(); setAsked(q.trim()); }}><input type="search" placeholder="Search the knowledge base" aria-label="Search the knowledge base" value=${q} onInput=${(e) => { setQ(e.target.value); if (!e.target.value) setAsked(''); }} /></form>
      <select aria-label="Scope" value=${scope} onChange=${(e) => setScope(e.target.value)}><option value="all">all</option><option value="project">project</option><option value="global">global</option></select>
      <button onClick=${() => setAdding(true)}>Add an entry</button>
    </div>
    ${adding ? html`<${Form} say=${say} onDone=${() => { setAdding(false); reload(); }} />` : ''}
    ${error && !data ? html`<p class="error">${error}</p>` : !data ? html`<p class="muted">Loading…</p>` : !items.length ? html`<p class="muted">${asked ? `Nothing matches “${asked}”.` : 'The knowledge base is empty. Agents add what they learn with report_learnings.'}</p>` : ''}
    <ul class="rows" data-nav-group data-testid="kb">${items.map((it) => html`<${Entry} key=${it.entry_id} item=${it} onOpen=${onOpen} say=${say} reload=${reload} />`)}</ul>
  </div>`;
}
