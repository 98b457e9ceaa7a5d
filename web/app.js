// The Overseer dashboard: the crew live from the hub (one server-sent-event stream of the whole
// floor), a view per tab, the agent panel beside them. Preact + htm as plain ES modules, no
// build step; the views other than Crew load on first use.
//
// Keys: ↑/↓ (and ←/→, Home/End) move between cards and list rows, Enter opens, Esc closes the
// panel, / goes to the search box, 1…9 and 0 switch tabs. The location hash keeps the tab and the
// open agent (#/timeline/j-7f3a), so Back closes a panel and a link opens one.
import { render } from 'preact';
import { html } from 'htm/preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { floorStream, post, session } from './api.js';
import { AgentPanel } from './panels.js';
import { Crew } from './crew.js';
import { ago, floorJobs, usd, when } from './format.js';

const TABS = [
  ['crew', 'Crew'], ['workflows', 'Workflows'], ['requests', 'Requests'], ['locks', 'Locks'], ['notes', 'Notes'],
  ['kb', 'Knowledge'], ['usage', 'Usage'], ['timeline', 'Timeline'], ['graph', 'Graph'], ['search', 'Search'],
  ['runs', 'Runs'], ['debates', 'Debates'], ['schedules', 'Schedules'],
];
const VIEWS = {
  workflows: () => import('./workflows.js'), requests: () => import('./requests.js'), locks: () => import('./locks.js'),
  notes: () => import('./notes.js'), kb: () => import('./kb.js'), usage: () => import('./usage.js'),
  timeline: () => import('./timeline.js'), graph: () => import('./graph.js'), search: () => import('./search.js'),
  runs: () => import('./runs.js'),
  debates: () => import('./debates.js'),
  schedules: () => import('./schedules.js'),
};

/** `#/<tab>[/<job>[/<attempt>]][?q=<search>]` */
function parseHash() {
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?');
  const [tab, job, attempt] = (path ?? '').split('/').map(decodeURIComponent);
  return { tab: VIEWS[tab] || tab === 'crew' ? tab : 'crew', job: job || null, attempt: attempt ? Number(attempt) : null, q: new URLSearchParams(query ?? '').get('q') ?? '' };
}
const toHash = (r) => `#/${r.tab}${r.job ? `/${encodeURIComponent(r.job)}${r.attempt ? `/${r.attempt}` : ''}` : ''}${r.q ? `?q=${encodeURIComponent(r.q)}` : ''}`;

function Lazy({ name, ...props }) {
  const [mod, setMod] = useState(null);
  const [err, setErr] = useState('');
  useEffect(() => { setMod(null); VIEWS[name]().then((m) => setMod(() => m.default), (e) => setErr(e.message)); }, [name]);
  if (err) return html`<p class="error">Could not load this view: ${err}</p>`;
  return mod ? html`<${mod} ...${props} />` : html`<p class="muted">Loading…</p>`;
}

const typing = (el) => !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);

/** Arrow keys between the `.nav-item`s of the focused group (cards, list rows); from nowhere, to the first. */
function arrows(e) {
  const keys = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1, Home: -Infinity, End: Infinity };
  if (!(e.key in keys) || e.altKey || e.ctrlKey || e.metaKey) return false;
  const active = document.activeElement;
  const inItem = active?.classList?.contains('nav-item');
  const group = (inItem && active.closest('[data-nav-group]')) || document.querySelector('#main [data-nav-group]') || document.getElementById('main');
  const items = [...(group?.querySelectorAll('.nav-item') ?? [])].filter((x) => x.offsetParent !== null);
  if (!items.length) return false;
  if (!inItem && active && active !== document.body && !document.getElementById('main')?.contains(active)) return false;
  const i = inItem ? items.indexOf(active) : -1;
  const d = keys[e.key];
  const next = d === -Infinity ? 0 : d === Infinity ? items.length - 1 : Math.min(items.length - 1, Math.max(0, i + d));
  items[next].focus();
  items[next].scrollIntoView({ block: 'nearest' });
  return true;
}

/** The header's search box: its own text while typing (frames re-render the header many times a second). */
function SearchBox({ q, onSearch }) {
  const [text, setText] = useState(q);
  useEffect(() => setText(q), [q]);
  return html`<form role="search" class="search" onSubmit=${(e) => { e.preventDefault(); if (text.trim()) onSearch(text.trim()); }}>
    <input id="search" name="q" type="search" placeholder="Search what the agents said ( / )" aria-label="Search what the agents said" value=${text} onInput=${(e) => setText(e.target.value)} />
  </form>`;
}

function App() {
  const [floor, setFloor] = useState(null);
  const [state, setState] = useState('connecting');
  const [downSince, setDownSince] = useState(null);
  const [epoch, setEpoch] = useState(0);
  const [tick, setTick] = useState(0);
  const [route, setRoute] = useState(parseHash);
  const [note, setNote] = useState(null);
  const last = useRef({ state: 'connecting', startedAt: null });
  const say = (text, bad = false) => { setNote({ text, bad }); setTimeout(() => setNote((n) => (n?.text === text ? null : n)), 6000); };
  const go = (r) => { const next = { ...route, ...r }; location.hash = toHash(next); };
  const routeRef = useRef(route);
  routeRef.current = route;

  useEffect(() => {
    let stop = () => {};
    const onState = (s) => {
      const was = last.current.state;
      last.current.state = s;
      setState(s);
      if (s === 'down' && was !== 'down') setDownSince(Date.now());
      if (s === 'live' && was === 'down') setEpoch((e) => e + 1); // back: panels read everything again
    };
    const onFloor = (f) => {
      // A hub that restarted between two frames (no visible outage) is caught up the same way.
      if (last.current.startedAt !== null && f.hub.started_at !== last.current.startedAt) setEpoch((e) => e + 1);
      last.current.startedAt = f.hub.started_at;
      setFloor(f);
      setTick((t) => t + 1);
    };
    const start = () => session().then(
      (s) => { if (s === false) setState('logged_out'); else stop = floorStream(onFloor, onState); },
      () => { onState('down'); setTimeout(start, 1000); },
    );
    start();
    const onHash = () => setRoute(parseHash());
    const key = (e) => {
      const active = document.activeElement;
      if (e.key === '/' && !typing(active)) { e.preventDefault(); document.getElementById('search')?.focus(); return; }
      if (e.key === 'Escape') {
        const r = routeRef.current;
        if (r.job) {
          e.preventDefault();
          location.hash = toHash({ ...r, job: null, attempt: null });
          // Focus back where the panel was opened from.
          setTimeout(() => document.querySelector(`[data-job="${CSS.escape(r.job)}"] .nav-item, .nav-item[data-job="${CSS.escape(r.job)}"]`)?.focus(), 0);
        } else if (typing(active)) active.blur();
        return;
      }
      if (typing(active)) return;
      if (arrows(e)) { e.preventDefault(); return; }
      if (/^[0-9]$/.test(e.key) && !e.altKey && !e.ctrlKey && !e.metaKey) {
        const t = TABS[(Number(e.key) + 9) % 10];
        if (t) { e.preventDefault(); location.hash = toHash({ tab: t[0], job: null, attempt: null, q: routeRef.current.q }); }
      }
    };
    addEventListener('hashchange', onHash);
    onHash(); // a hash set between the first render and this listener
    addEventListener('keydown', key);
    return () => { stop(); removeEventListener('hashchange', onHash); removeEventListener('keydown', key); };
  }, []);

  const jobs = useMemo(() => floorJobs(floor), [floor]);
  if (state === 'logged_out') return html`<main class="login"><h1>Overseer</h1><p>This browser is not logged in (or the session ended). Run <code>overseer dashboard</code> for a new link.</p></main>`;
  if (!floor) return html`<main class="login"><p data-testid="connection">${state === 'down' ? 'The hub is not answering; retrying by itself…' : 'Connecting to the hub…'}</p></main>`;
  const t = floor.totals;
  const onOpen = (job, attempt = null, find = null) => { go({ job, attempt }); setFind(find); };
  const pending = floor.needs_you.filter((n) => n.request_id).length;
  const counts = { requests: pending || '', locks: floor.locks.length || '', workflows: floor.workflows.filter((w) => w.status !== 'succeeded' && w.status !== 'cancelled').length || '' };
  const view = route.tab === 'crew'
    ? html`<${Crew} floor=${floor} open=${route.job} onOpen=${onOpen} say=${say} />`
    : html`<${Lazy} name=${route.tab} floor=${floor} tick=${tick} epoch=${epoch} open=${route.job} onOpen=${onOpen} say=${say} q=${route.q} />`;
  return html`<div class="app">
    <header class="top">
      <h1>Overseer</h1>
      <span class="totals" data-testid="totals">${t.running} running · ${t.queued} queued · ${t.done} done · ${t.failed} failed · ${usd(t.cost_usd, t.cost_unknown)} · cap ${t.cap}${floor.hub.uptime_ms !== null ? ` · up ${ago(floor.hub.uptime_ms)}` : ''}</span>
      <span class=${`conn ${state}`} role="status" data-testid="connection">${state === 'live' ? 'live' : state === 'down' ? 'hub down · reconnecting…' : 'connecting…'}</span>
      <${SearchBox} q=${route.q} onSearch=${(q) => go({ tab: 'search', q, job: null, attempt: null })} />
      <button class="logout" onClick=${async () => { try { await post('/logout'); } catch { /* gone already */ } location.reload(); }}>Log out</button>
    </header>
    <nav class="tabs" aria-label="Views">${TABS.map(([id, label], i) => html`<a href=${toHash({ tab: id, job: route.job, attempt: route.attempt, q: route.q })} aria-current=${route.tab === id ? 'page' : undefined} title=${`${label} (${(i + 1) % 10})`}>${label}${counts[id] ? html` <span class="badge">${counts[id]}</span>` : ''}</a>`)}</nav>
    ${(floor.limits ?? []).map((l) => html`<div class="banner limit" role="status" data-testid="limit" key=${`${l.provider}:${l.key_hash}`} title=${l.reason ?? ''}>⏸ ${l.line} · new ${l.provider} agents start when it has passed</div>`)}
    ${state === 'down' ? html`<div class="banner down" role="alert" data-testid="down">The hub is not answering (since ${when(downSince)}): it stopped or is restarting. This page reconnects by itself and catches up; what it shows is from before.</div>` : ''}
    ${note ? html`<div class=${`note${note.bad ? ' bad' : ''}`} role="alert">${note.text}</div>` : ''}
    <div key="frame" class=${`frame${route.job ? ' with-panel' : ''}`}>
    <main id="main" class=${`view-${route.tab}`}>${view}</main>
    ${route.job ? html`<${AgentPanel} key=${route.job} jobId=${route.job} floorJob=${jobs.find((j) => j.job_id === route.job)} attempt=${route.attempt} find=${findRef.current} epoch=${epoch} tick=${tick}
      onAttempt=${(a) => go({ attempt: a })} onOpen=${onOpen} onClose=${() => go({ job: null, attempt: null })} say=${say} />` : ''}
    </div>
  </div>`;
}

// What a search result asked the panel to find (not kept in the URL).
const findRef = { current: null };
const setFind = (f) => { findRef.current = f; };

render(html`<${App} />`, document.getElementById('app'));
