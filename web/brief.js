// The crew brief on the Crew view (issue 31 point 6, docs/floor.md "The crew brief"): the standing
// text every new agent gets in its first prompt, who set it and when; Edit sets it as the person
// through the hub's floor API (src/floor/http.ts: the same schema as the lead's set_brief, so an
// empty or too long text is refused with the hub's message and nothing changes), Clear removes it.
// It is the floor's own field (floor.brief, null when none): every frame carries it, and setting or
// clearing it (here, by the lead, on another hub) sends a frame (the bus event `brief`).
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { post } from './api.js';

const MAX = 8000;

export function CrewBrief({ floor, say }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const save = async (path, body) => {
    setBusy(true);
    try {
      const r = await post(path, body);
      setEditing(false);
      say(r.text === null ? 'crew brief cleared' : `crew brief set: sent to ${r.sent_to.length} running agent(s)`);
    } catch (e) { say(e.message, true); } finally { setBusy(false); }
  };
  // A floor of a hub older than the field has none: nothing to show rather than a wrong "no brief".
  if (!floor || floor.brief === undefined) return null;
  const brief = floor.brief ?? { text: null };
  const section = (body) => html`<section aria-labelledby="h-brief" data-section="brief"><h2 id="h-brief">Crew brief</h2>${body}</section>`;
  if (editing) {
    return section(html`<form class="brief" data-testid="brief-form" onSubmit=${(e) => { e.preventDefault(); save('/api/floor/brief', { text }); }}>
      <textarea aria-label="Brief text" rows="5" maxlength=${MAX} value=${text} onInput=${(e) => setText(e.target.value)}></textarea>
      <div class="row"><span class="muted">${text.length}/${MAX}</span><button class="ok" disabled=${busy}>Save brief</button><button type="button" onClick=${() => setEditing(false)}>Cancel</button></div>
    </form>`);
  }
  return section(html`<div class="brief" data-testid="brief">
    ${brief.text === null
      ? html`<span class="muted">No crew brief: standing instructions every new agent would read first.</span>`
      : html`<div class="pre" data-testid="brief-text">${brief.text}</div><div class="muted">v${brief.version} · set by ${brief.set_by} · ${new Date(brief.set_at).toISOString()}</div>`}
    <div class="row"><button onClick=${() => { setText(brief.text ?? ''); setEditing(true); }}>${brief.text === null ? 'Write a brief' : 'Edit brief'}</button>
      ${brief.text === null ? '' : html`<button class="danger" disabled=${busy} onClick=${() => { if (confirm('Clear the crew brief? Running agents are told it no longer holds.')) save('/api/floor/brief/clear', {}); }}>Clear</button>`}</div>
  </div>`);
}
