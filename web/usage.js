// The Usage view: what the crew cost and the tokens it used, by model, provider, label, workflow,
// project, template, day and kind of run — agent attempts and the hub's own runs (retry diagnosis, KB triage) alike.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { useLive } from './hooks.js';
import { tokens, usd } from './format.js';

const DIMS = [['by_model', 'Model'], ['by_provider', 'Provider'], ['by_kind', 'Kind of run'], ['by_project', 'Project'], ['by_template', 'Template'], ['by_workflow', 'Workflow'], ['by_label', 'Label'], ['by_day', 'Day']];

function Table({ rows, name, total }) {
  const max = Math.max(...rows.map((r) => r.cost_usd ?? 0), 1e-9);
  return html`<div class="scroll-x"><table class="usage" data-dim=${name}><thead><tr><th>${name}</th><th class="num">cost</th><th class="bar-col"></th><th class="num">input</th><th class="num">output</th><th class="num">cache read</th><th class="num">runs</th><th class="num">jobs</th></tr></thead>
    <tbody>${rows.map((r) => html`<tr data-key=${r.key}><td>${r.label ? html`${r.label} <span class="muted">${r.key}</span>` : r.key}</td><td class="num">${usd(r.cost_usd, r.cost_unknown)}</td>
      <td class="bar-col"><span class="bar" style=${`--w:${((r.cost_usd ?? 0) / max) * 100}%`}></span></td>
      <td class="num">${tokens(r.input_tokens)}</td><td class="num">${tokens(r.output_tokens)}</td><td class="num">${tokens(r.cache_read_tokens)}</td><td class="num">${r.runs}</td><td class="num">${r.jobs}</td></tr>`)}
    ${total ? html`<tr class="total"><td>all</td><td class="num">${usd(total.cost_usd, total.cost_unknown)}</td><td></td><td class="num">${tokens(total.input_tokens)}</td><td class="num">${tokens(total.output_tokens)}</td><td class="num">${tokens(total.cache_read_tokens)}</td><td class="num">${total.runs}</td><td class="num">${total.jobs}</td></tr>` : ''}</tbody></table></div>`;
}

export default function Usage({ tick }) {
  const [since, setSince] = useState('');
  const tz = new Date().getTimezoneOffset();
  const { data, error } = useLive(`/api/web/usage?tz=${tz}${since ? `&since=${since}` : ''}`, tick, 1000);
  if (error && !data) return html`<p class="error">${error}</p>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const t = data.totals;
  return html`<div class="usage-view">
    <div class="toolbar"><label>Since <select value=${since} onChange=${(e) => setSince(e.target.value)}>
      <option value="">the beginning</option><option value="1h">1 hour ago</option><option value="24h">24 hours ago</option><option value="7d">7 days ago</option><option value="30d">30 days ago</option></select></label></div>
    <dl class="kpis" data-testid="usage-totals">
      <div><dt>cost</dt><dd data-testid="usage-cost" data-value=${t.cost_usd}>${usd(t.cost_usd, t.cost_unknown)}</dd></div>
      <div><dt>input tokens</dt><dd data-testid="usage-input" data-value=${t.input_tokens}>${t.input_tokens.toLocaleString('en-US')}</dd></div>
      <div><dt>output tokens</dt><dd data-testid="usage-output" data-value=${t.output_tokens}>${t.output_tokens.toLocaleString('en-US')}</dd></div>
      <div><dt>cache reads</dt><dd>${t.cache_read_tokens.toLocaleString('en-US')}</dd></div>
      <div><dt>runs</dt><dd>${t.runs} for ${t.jobs} jobs</dd></div>
    </dl>
    ${t.cost_unknown ? html`<p class="warn">Some runs used a model without a price: the costs are lower bounds.</p>` : ''}
    ${DIMS.map(([k, name]) => html`<section><h2>${name}</h2>${k === 'by_label' ? html`<p class="muted">A job with several labels counts under each.</p>` : ''}<${Table} rows=${data[k]} name=${name} total=${k === 'by_label' ? null : t} /></section>`)}
  </div>`;
}
