// The Crew view: NEEDS YOU first (requests answered in place), then RUNNING (the tree), QUEUED /
// WAITING (with why), DONE — the floor as it streams in. Cards have a fixed height and tabular
// numbers so a live update never moves anything; arrow keys move between cards (nav.js), Enter
// opens the agent panel.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { enc, post } from './api.js';
import { ago, tokens, tone, usd } from './format.js';
import { runMeta, ScriptRun } from './scriptRun.js';
import { ReadyToShip } from './ship.js';
import { NewAgent } from './newAgent.js';
import { CrewBrief } from './brief.js';

const PLAN = [['rationale', 'Rationale'], ['resources', 'Resources'], ['risks', 'Risks'], ['rollback', 'Rollback']];

/** An approval's plan (request_approval's rationale, resources, risks, rollback) as labelled sections; a list section as a list. */
export function Plan({ plan }) {
  if (!plan) return null;
  return html`<dl class="plan" data-testid="plan">${PLAN.filter(([k]) => plan[k] !== undefined).map(([k, label]) => html`
    <dt data-plan=${k}>${label}</dt><dd data-plan-text=${k}>${Array.isArray(plan[k]) ? html`<ul>${plan[k].map((x) => html`<li>${x}</li>`)}</ul>` : html`<span class="pre">${plan[k]}</span>`}</dd>`)}</dl>`;
}

/** `showHost`: the floor shows each row's host (the crew has workers or more than one host). */
function Card({ job, open, onOpen, depth = 0, showHost = false }) {
  return html`<li class=${`card ${tone(job.status)}${job.job_id === open ? ' selected' : ''}`} style=${`--depth:${depth}`} data-job=${job.job_id} data-status=${job.status}>
    <button class="card-main nav-item" onClick=${() => onOpen(job.job_id)} aria-label=${`${job.title}, ${job.status}`} aria-expanded=${job.job_id === open}>
      <span class="title"><span class=${`dot ${tone(job.status)}`}></span>${job.title}${job.role ? html` <span class="badge role" data-testid="role">${job.role}</span>` : ''}</span>
      <span class="meta">${job.status}${showHost && job.host ? html` · <span data-testid="host">on ${job.host}</span>` : ''} · ${job.provider}${job.model ? `/${job.model}` : ''}${job.model_tier ? ` (auto: ${job.model_tier})` : ''} · ${ago(job.elapsed_ms)} · ${job.turns}${job.max_turns ? `/${job.max_turns}` : ''} turns · ${usd(job.cost_usd, job.cost_unknown)} · ${tokens(job.input_tokens + job.output_tokens)} tok</span>
      <progress max="1" value=${job.progress ?? 0} aria-label="progress" class=${job.progress === null ? 'none' : ''}></progress>
      <span class="last">${job.warnings?.length ? html`<b class="warn">${job.warnings.map((w) => w.kind).join(', ')}</b> ` : ''}${job.why_waiting ?? job.result_line ?? job.last_line ?? ''}</span>
    </button>
    ${job.children?.length ? html`<ul>${job.children.map((c) => html`<${Card} key=${c.job_id} job=${c} open=${open} onOpen=${onOpen} depth=${depth + 1} showHost=${showHost} />`)}</ul>` : ''}
  </li>`;
}

/** Approve / Reject / Answer a request as the person (channel "web"); `confirm` stands for the terminal's confirmation. */
export function Answer({ request, say }) {
  const [answer, setAnswer] = useState('');
  const id = request.request_id;
  const respond = async (body) => {
    try {
      await post(`/api/requests/${enc(id)}/respond`, { channel: 'web', confirmation: 'page', ...body });
      say(`request ${id}: answered`);
    } catch (e) { say(e.message, true); }
  };
  const text = request.text ?? request.summary;
  if (request.kind !== 'question') {
    return html`<button class="ok" onClick=${() => { if (confirm(`Approve as the person: ${text}?`)) respond({ decision: 'approved' }); }}>Approve</button>
      <button class="danger" onClick=${() => { if (confirm(`Reject: ${text}?`)) respond({ decision: 'rejected' }); }}>Reject</button>`;
  }
  return html`<form class="answer" onSubmit=${(e) => { e.preventDefault(); if (answer.trim()) respond({ answer }); }}>
    ${request.options?.length
      ? html`<select aria-label="Answer" onChange=${(e) => setAnswer(e.target.value)}><option value="">choose…</option>${request.options.map((o) => html`<option>${o}</option>`)}</select>`
      : html`<input aria-label="Answer" value=${answer} onInput=${(e) => setAnswer(e.target.value)} />`}<button>Answer</button></form>`;
}

function NeedItem({ item, onOpen, say }) {
  return html`<li class=${`need need-item ${item.kind}`} data-key=${item.key}>
    <div><b>${item.kind.replace('_', ' ')}</b> · ${item.title}</div>
    <div class="text">${item.summary && item.summary.includes('\n') ? html`<span class="pre">${item.summary}</span>` : item.text}</div>
    <${Plan} plan=${item.plan} />
    ${item.options?.length ? html`<div class="muted" data-testid="options">options: ${item.options.join(' · ')}</div>` : ''}
    <div class="row">
      ${item.request_id ? html`<${Answer} request=${item} say=${say} />` : ''}
      ${item.job_id ? html`<button onClick=${() => onOpen(item.job_id)}>Open agent</button>` : ''}
      <code class="cmd">${item.command}</code>
    </div>
  </li>`;
}

function Section({ name, label, children, count }) {
  if (!count) return null;
  return html`<section aria-labelledby=${`h-${name}`} data-section=${name}><h2 id=${`h-${name}`}>${label} <span class="count">${count}</span></h2>${children}</section>`;
}

export function Crew({ floor, open, onOpen, say }) {
  const [filter, setFilter] = useState('');
  const [project, setProject] = useState('');
  const f = filter.trim().toLowerCase();
  // The projects of the jobs on the floor (archived ones are not on it unless the stream asked for one).
  const projects = [...new Set([...floor.running, ...floor.queued, ...floor.done].map((j) => j.project).filter(Boolean))].sort();
  const keep = (j) => (!project || j.project === project) && (!f || `${j.title} ${j.job_id} ${j.status} ${j.labels.join(' ')} ${j.project ?? ''} ${j.last_line ?? ''}`.toLowerCase().includes(f));
  const cards = (jobs) => html`<ul class="cards">${jobs.filter(keep).map((j) => html`<${Card} key=${j.job_id} job=${j} open=${open} onOpen=${onOpen} showHost=${!!floor.show_host} />`)}</ul>`;
  const empty = !floor.running.length && !floor.queued.length && !floor.done.length && !floor.needs_you.length && !(floor.runs ?? []).length && !(floor.ready_to_ship ?? []).length;
  return html`<div class="crew" data-nav-group>
    <div class="toolbar"><input type="search" placeholder="Filter agents" aria-label="Filter agents" value=${filter} onInput=${(e) => setFilter(e.target.value)} /><${NewAgent} onOpen=${onOpen} say=${say} />
      ${projects.length ? html`<label>Project <select aria-label="Project" data-testid="project-filter" value=${project} onChange=${(e) => setProject(e.target.value)}><option value="">all</option>${projects.map((p) => html`<option value=${p}>${p}</option>`)}</select></label>` : ''}</div>
    <${CrewBrief} floor=${floor} say=${say} />
    <${Section} name="needs_you" label="Needs you" count=${floor.needs_you.length}><ul class="needs">${floor.needs_you.map((n) => html`<${NeedItem} key=${n.key} item=${n} onOpen=${onOpen} say=${say} />`)}</ul><//>
    <${Section} name="ready_to_ship" label="Ready to ship" count=${(floor.ready_to_ship ?? []).length}><${ReadyToShip} items=${floor.ready_to_ship ?? []} onOpen=${onOpen} say=${say} /><//>
    <${Section} name="running" label="Running" count=${floor.running.filter(keep).length}>${cards(floor.running)}<//>
    <${Section} name="runs" label="Script runs" count=${(floor.runs ?? []).length}><ul class="script-runs">${(floor.runs ?? []).map((r) => html`<li key=${r.run_id}>
      <details data-run=${r.run_id} open=${r.status === 'running'}><summary><span class=${`dot ${tone(r.status)}`}></span><b>${r.title}</b> <span class="muted">${r.run_id}</span> · ${runMeta(r)}</summary>
        <${ScriptRun} run=${r} onOpen=${onOpen} say=${say} compact /></details></li>`)}</ul><//>
    <${Section} name="queued" label="Queued / waiting" count=${floor.queued.filter(keep).length}>${cards(floor.queued)}<//>
    <${Section} name="done" label="Done" count=${floor.done.filter(keep).length}>${cards(floor.done)}<//>
    ${empty ? html`<p class="muted">No agents yet. Ask the lead to spawn some, or start one with New agent.</p>` : ''}
  </div>`;
}
