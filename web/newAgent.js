// The "New agent" form (issue 31 point 5): the person starts an agent as the lead does. It posts
// spawn_agent's own input to /api/web/jobs (src/web/api/spawn.ts → JobService.spawn), so the hub
// checks it exactly as the tool does; a refusal is shown as the hub wrote it, and nothing starts.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { post } from './api.js';

const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
const EMPTY = {
  prompt: '', title: '', provider: '', model: '', role: '', labels: '', depends_on: '', priority: '', checks: '', project: '', cwd: '', worktree: false,
  template: '', retry: '', max_turns: '', budget_usd: '', timeout_s: '',
  at: '', every_s: '', cron: '', max_runs: '', until: '', context: [],
};
const TEXT = ['title', 'provider', 'model', 'role', 'project', 'cwd', 'template', 'retry', 'cron'];
const NUMBERS = ['priority', 'max_turns', 'budget_usd', 'timeout_s', 'every_s', 'max_runs'];

/** A number field: left out when empty; what is not a number goes as typed, so the hub's schema names it. */
const num = (v) => (Number.isFinite(Number(v)) ? Number(v) : v);
/** A time field: `datetime-local` has no zone, spawn_agent wants one: the browser's local time, as ISO 8601 in UTC. */
const time = (v) => (/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(v) && !Number.isNaN(Date.parse(v)) ? new Date(v).toISOString() : v);

/** spawn_agent's input from the form's fields: empty ones are left out (the hub's defaults apply). */
export function spawnBody(f) {
  const b = { prompt: f.prompt };
  for (const k of TEXT) if (f[k].trim()) b[k] = f[k].trim();
  for (const k of NUMBERS) if (f[k].trim()) b[k] = num(f[k].trim());
  for (const k of ['at', 'until']) if (f[k].trim()) b[k] = time(f[k].trim());
  if (f.labels.trim()) b.labels = list(f.labels);
  if (f.depends_on.trim()) b.depends_on = list(f.depends_on);
  if (f.checks.trim()) b.checks = f.checks.split('\n').map((x) => x.trim()).filter(Boolean);
  const ctx = f.context.filter((c) => c.name.trim() || c.text.trim());
  if (ctx.length) b.context = Object.fromEntries(ctx.map((c) => [c.name.trim(), c.text]));
  if (f.worktree) b.worktree = true;
  return b;
}

export function NewAgent({ onOpen, say }) {
  const [open, setOpen] = useState(false);
  const [f, setF] = useState(EMPTY);
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  const set = (k) => (e) => setF({ ...f, [k]: e.target.type === 'checkbox' ? e.target.checked : e.target.value });
  const field = (k, label, attrs = {}) => html`<label>${label} <input name=${k} aria-label=${label} value=${f[k]} onInput=${set(k)} ...${attrs} /></label>`;
  const setCtx = (i, k) => (e) => setF({ ...f, context: f.context.map((c, j) => (j === i ? { ...c, [k]: e.target.value } : c)) });
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    try {
      const r = await post('/api/web/jobs', spawnBody(f));
      setErr(''); setF(EMPTY); setOpen(false);
      say(`spawned ${r.job_id} (${r.status})`);
      onOpen(r.job_id);
    } catch (x) { setErr(x.message); } finally { setBusy(false); }
  };
  if (!open) return html`<button class="new-agent" data-testid="new-agent" onClick=${() => setOpen(true)}>New agent</button>`;
  return html`<form class="new-agent-form" data-testid="new-agent-form" aria-label="New agent" onSubmit=${submit}>
    <label>Prompt <textarea name="prompt" aria-label="Prompt" required rows="4" value=${f.prompt} onInput=${set('prompt')}></textarea></label>
    <div class="row">${field('title', 'Title')}
      <label>Provider <select name="provider" aria-label="Provider" value=${f.provider} onChange=${set('provider')}><option value="">default</option><option value="claude">claude</option><option value="codex">codex</option></select></label>
      ${field('model', 'Model', { placeholder: 'default, or auto' })}${field('role', 'Role', { placeholder: 'implementer' })}${field('template', 'Template', { placeholder: '.overseer/templates/<name>.md' })}</div>
    <div class="row">${field('labels', 'Labels', { placeholder: 'a, b' })}${field('depends_on', 'Depends on', { placeholder: 'job ids, comma-separated' })}
      ${field('priority', 'Priority', { placeholder: '-10..10' })}
      <label>Retry <select name="retry" aria-label="Retry" value=${f.retry} onChange=${set('retry')}><option value="">default (none)</option><option value="none">none</option><option value="same">same</option><option value="analyze">analyze</option></select></label></div>
    <div class="row">${field('project', 'Project')}${field('cwd', 'Directory')}
      <label><input type="checkbox" name="worktree" aria-label="Own worktree" checked=${f.worktree} onChange=${set('worktree')} /> own worktree</label></div>
    <fieldset class="row"><legend>Limits</legend>${field('max_turns', 'Max turns', { inputmode: 'numeric' })}${field('budget_usd', 'Budget (USD)', { inputmode: 'decimal' })}${field('timeout_s', 'Timeout (s)', { inputmode: 'numeric' })}</fieldset>
    <fieldset class="row"><legend>Schedule</legend>${field('at', 'At', { type: 'datetime-local' })}${field('every_s', 'Every (s)', { inputmode: 'numeric' })}
      ${field('cron', 'Cron', { placeholder: '0 9 * * 1-5' })}${field('max_runs', 'Max runs', { inputmode: 'numeric' })}${field('until', 'Until', { type: 'datetime-local' })}</fieldset>
    <fieldset class="context" data-testid="new-agent-context"><legend>Context</legend>
      ${f.context.map((c, i) => html`<div class="row">
        <label>Name <input name=${`context-name-${i}`} aria-label=${`Context name ${i + 1}`} value=${c.name} onInput=${setCtx(i, 'name')} /></label>
        <label class="grow">Text <textarea name=${`context-text-${i}`} aria-label=${`Context text ${i + 1}`} rows="2" value=${c.text} onInput=${setCtx(i, 'text')}></textarea></label>
        <button type="button" aria-label=${`Remove context ${i + 1}`} onClick=${() => setF({ ...f, context: f.context.filter((_, j) => j !== i) })}>Remove</button></div>`)}
      <button type="button" data-testid="add-context" onClick=${() => setF({ ...f, context: [...f.context, { name: '', text: '' }] })}>Add context</button></fieldset>
    <label>Checks (one a line) <textarea name="checks" aria-label="Checks" rows="2" placeholder="diff_not_empty&#10;command:npm test" value=${f.checks} onInput=${set('checks')}></textarea></label>
    ${err ? html`<p class="error" role="alert" data-testid="new-agent-error">${err}</p>` : ''}
    <div class="row"><button type="submit" disabled=${busy}>Spawn</button><button type="button" onClick=${() => { setOpen(false); setErr(''); }}>Close</button></div>
  </form>`;
}
