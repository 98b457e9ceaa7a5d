// The Overseer dashboard: the floor of the crew, live from the hub (server-sent events), grouped
// like `overseer watch` (NEEDS YOU first), and the agent panel. Preact + htm, no build step.
import { render } from 'preact';
import { html } from 'htm/preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { floorStream, post, session } from './api.js';
import { AgentPanel } from './panels.js';
import { ago, tokens, tone, usd } from './format.js';

function flatten(jobs, out = []) {
  for (const j of jobs) { out.push(j); flatten(j.children ?? [], out); }
  return out;
}

function Card({ job, selected, onOpen, depth = 0 }) {
  return html`<li class=${`card ${tone(job.status)}${selected ? ' selected' : ''}`} style=${`--depth:${depth}`} data-job=${job.job_id} data-status=${job.status}>
    <button class="card-main" onClick=${() => onOpen(job.job_id)} aria-label=${`${job.title}, ${job.status}`}>
      <span class="title"><span class=${`dot ${tone(job.status)}`}></span>${job.title}</span>
      <span class="meta">${job.provider}${job.model ? `/${job.model}` : ''} · ${ago(job.elapsed_ms)} · ${job.turns}${job.max_turns ? `/${job.max_turns}` : ''} turns · ${usd(job.cost_usd, job.cost_unknown)} · ${tokens(job.input_tokens + job.output_tokens)} tok</span>
      ${job.progress !== null ? html`<progress max="1" value=${job.progress} aria-label="progress"></progress>` : ''}
      <span class="last">${job.warnings?.length ? html`<b class="warn">${job.warnings.map((w) => w.kind).join(', ')}</b> ` : ''}${job.why_waiting ?? job.result_line ?? job.last_line ?? ''}</span>
    </button>
    ${job.children?.length ? html`<ul>${job.children.map((c) => html`<${Card} job=${c} selected=${false} onOpen=${onOpen} depth=${depth + 1} />`)}</ul>` : ''}
  </li>`;
}

function NeedItem({ item, onOpen, say }) {
  const [answer, setAnswer] = useState('');
  const respond = async (body) => {
    try {
      await post(`/api/requests/${encodeURIComponent(item.request_id)}/respond`, { channel: 'web', confirmation: 'page', ...body });
      say(`request ${item.request_id}: answered`);
    } catch (e) { say(e.message, true); }
  };
  const isRequest = !!item.request_id;
  return html`<li class=${`need ${item.kind}`} data-key=${item.key}>
    <div><b>${item.kind.replace('_', ' ')}</b> · ${item.title}</div>
    <div class="text">${item.text}</div>
    <div class="row">
      ${isRequest && item.kind !== 'question' ? html`
        <button class="ok" onClick=${() => { if (confirm(`Approve as the person: ${item.text}?`)) respond({ decision: 'approved' }); }}>Approve</button>
        <button class="danger" onClick=${() => { if (confirm(`Reject: ${item.text}?`)) respond({ decision: 'rejected' }); }}>Reject</button>` : ''}
      ${isRequest && item.kind === 'question' ? html`<form onSubmit=${(e) => { e.preventDefault(); if (answer.trim()) respond({ answer }); }}>
        ${item.options?.length
          ? html`<select aria-label="Answer" onChange=${(e) => setAnswer(e.target.value)}><option value="">choose…</option>${item.options.map((o) => html`<option>${o}</option>`)}</select>`
          : html`<input aria-label="Answer" value=${answer} onInput=${(e) => setAnswer(e.target.value)} />`}<button>Answer</button></form>` : ''}
      ${item.job_id ? html`<button onClick=${() => onOpen(item.job_id)}>Open agent</button>` : ''}
      <code class="cmd">${item.command}</code>
    </div>
  </li>`;
}

function Section({ name, label, children, count }) {
  if (!count) return null;
  return html`<section aria-labelledby=${`h-${name}`} data-section=${name}><h2 id=${`h-${name}`}>${label} <span class="count">${count}</span></h2>${children}</section>`;
}

function App() {
  const [floor, setFloor] = useState(null);
  const [state, setState] = useState('connecting');
  const [open, setOpen] = useState(null);
  const [filter, setFilter] = useState('');
  const [note, setNote] = useState(null);
  const say = (text, bad = false) => { setNote({ text, bad }); setTimeout(() => setNote((n) => (n?.text === text ? null : n)), 6000); };
  useEffect(() => {
    let stop = () => {};
    session().then((s) => { if (s === false) setState('logged_out'); else stop = floorStream(setFloor, setState); }, () => setState('reconnecting'));
    const key = (e) => {
      if (e.key === 'Escape') setOpen(null);
      if (e.key === '/' && document.activeElement?.tagName !== 'INPUT') { e.preventDefault(); document.getElementById('filter')?.focus(); }
    };
    addEventListener('keydown', key);
    return () => { stop(); removeEventListener('keydown', key); };
  }, []);
  const all = useMemo(() => (floor ? [...flatten(floor.running), ...floor.queued, ...floor.done] : []), [floor]);
  if (state === 'logged_out') return html`<main class="login"><h1>Overseer</h1><p>This browser is not logged in (or the session ended). Run <code>overseer dashboard</code> for a new link.</p></main>`;
  if (!floor) return html`<main class="login"><p>${state === 'reconnecting' ? 'The hub is not answering; retrying…' : 'Connecting to the hub…'}</p></main>`;
  const f = filter.trim().toLowerCase();
  const keep = (j) => !f || `${j.title} ${j.job_id} ${j.status} ${j.labels.join(' ')} ${j.last_line ?? ''}`.toLowerCase().includes(f);
  const selected = all.find((j) => j.job_id === open);
  const t = floor.totals;
  return html`<div class=${`layout${selected ? ' with-panel' : ''}`}>
    <header class="top">
      <h1>Overseer</h1>
      <span data-testid="totals">${t.running} running · ${t.queued} queued · ${t.done} done · ${t.failed} failed · ${usd(t.cost_usd, t.cost_unknown)} · cap ${t.cap}${floor.hub.uptime_ms !== null ? ` · up ${ago(floor.hub.uptime_ms)}` : ''}</span>
      <span class=${`conn ${state}`} role="status" data-testid="connection">${state === 'live' ? 'live' : 'reconnecting…'}</span>
      <input id="filter" type="search" placeholder="Filter ( / )" aria-label="Filter agents" value=${filter} onInput=${(e) => setFilter(e.target.value)} />
      <button onClick=${async () => { try { await post('/logout'); } catch { /* gone already */ } location.reload(); }}>Log out</button>
    </header>
    ${note ? html`<div class=${`note${note.bad ? ' bad' : ''}`} role="alert">${note.text}</div>` : ''}
    <main>
      <${Section} name="needs_you" label="Needs you" count=${floor.needs_you.length}><ul class="needs">${floor.needs_you.map((n) => html`<${NeedItem} key=${n.key} item=${n} onOpen=${setOpen} say=${say} />`)}</ul><//>
      <${Section} name="running" label="Running" count=${floor.running.filter(keep).length}><ul class="cards">${floor.running.filter(keep).map((j) => html`<${Card} key=${j.job_id} job=${j} selected=${j.job_id === open} onOpen=${setOpen} />`)}</ul><//>
      <${Section} name="queued" label="Queued / waiting" count=${floor.queued.filter(keep).length}><ul class="cards">${floor.queued.filter(keep).map((j) => html`<${Card} key=${j.job_id} job=${j} selected=${j.job_id === open} onOpen=${setOpen} />`)}</ul><//>
      <${Section} name="done" label="Done" count=${floor.done.filter(keep).length}><ul class="cards">${floor.done.filter(keep).map((j) => html`<${Card} key=${j.job_id} job=${j} selected=${j.job_id === open} onOpen=${setOpen} />`)}</ul><//>
      ${!floor.running.length && !floor.queued.length && !floor.done.length && !floor.needs_you.length ? html`<p class="muted">No agents yet. Ask the lead to spawn some.</p>` : ''}
    </main>
    ${selected ? html`<${AgentPanel} job=${selected} onClose=${() => setOpen(null)} say=${say} />` : ''}
  </div>`;
}

render(html`<${App} />`, document.getElementById('app'));
