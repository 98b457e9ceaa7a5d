// The "New agent" form (issue 31 point 5): the person starts an agent as the lead does. It posts
// spawn_agent's own input to /api/web/jobs (src/web/api/spawn.ts → JobService.spawn), so the hub
// checks it exactly as the tool does; a refusal is shown as the hub wrote it, and nothing starts.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { post } from './api.js';

const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
const EMPTY = { prompt: '', title: '', provider: '', model: '', role: '', labels: '', depends_on: '', budget_usd: '', priority: '', checks: '', project: '', cwd: '', worktree: false };

/** spawn_agent's input from the form's fields: empty ones are left out (the hub's defaults apply). */
export function spawnBody(f) {
  const b = { prompt: f.prompt };
  for (const k of ['title', 'provider', 'model', 'role', 'project', 'cwd']) if (f[k].trim()) b[k] = f[k].trim();
  if (f.labels.trim()) b.labels = list(f.labels);
  if (f.depends_on.trim()) b.depends_on = list(f.depends_on);
  if (f.checks.trim()) b.checks = f.checks.split('\n').map((x) => x.trim()).filter(Boolean);
  if (f.budget_usd.trim()) b.budget_usd = Number(f.budget_usd);
  if (f.priority.trim()) b.priority = Number(f.priority);
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
      ${field('model', 'Model', { placeholder: 'default, or auto' })}${field('role', 'Role', { placeholder: 'implementer' })}</div>
    <div class="row">${field('labels', 'Labels', { placeholder: 'a, b' })}${field('depends_on', 'Depends on', { placeholder: 'job ids, comma-separated' })}
      ${field('budget_usd', 'Budget (USD)', { inputmode: 'decimal' })}${field('priority', 'Priority', { placeholder: '-10..10' })}</div>
    <div class="row">${field('project', 'Project')}${field('cwd', 'Directory')}
      <label><input type="checkbox" name="worktree" aria-label="Own worktree" checked=${f.worktree} onChange=${set('worktree')} /> own worktree</label></div>
    <label>Checks (one a line) <textarea name="checks" aria-label="Checks" rows="2" placeholder="diff_not_empty&#10;command:npm test" value=${f.checks} onInput=${set('checks')}></textarea></label>
    ${err ? html`<p class="error" role="alert" data-testid="new-agent-error">${err}</p>` : ''}
    <div class="row"><button type="submit" disabled=${busy}>Spawn</button><button type="button" onClick=${() => { setOpen(false); setErr(''); }}>Close</button></div>
  </form>`;
}
