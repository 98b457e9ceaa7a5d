// The agent panel: Output (the readable transcript, streamed; tool calls folded, any attempt),
// Changes (per file, syntax-highlighted), Details (attempts, warnings, events, requests) and the
// actions on the job. Works for any job, on the floor or not (a search hit, an old timeline bar).
import { html } from 'htm/preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { enc, get, post, outputStream } from './api.js';
import { ago, tokens, tone, usd, when } from './format.js';
import { highlightLine, langOf } from './highlight.js';

const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);
/** Readable-line kinds (src/launch/claude/transcript.ts, codex/transcript.ts) that are tool traffic: folded. */
const TOOL = /^(tool_use|tool_result|exec|file_change|tool_progress|web_search|hook)\b/;
const KIND = /^(assistant:|tool_use |tool_result |exec \(|file_change |user:|result:|init:|reasoning:|todo:|hook |system\/|info:|warning:|error:|api_retry |permission_denied |tool_progress |web_search |\[unparsed\])/;

/** Rendered lines (each "HH:MM:SS kind …", continuation lines indented) → entries { time, kind, text }. */
export function entriesOf(lines) {
  const out = [];
  for (const l of lines) {
    for (const sub of l.split('\n')) {
      const time = sub.slice(0, 8).trim();
      const rest = sub.slice(9);
      const m = KIND.exec(rest);
      if (m || !out.length) out.push({ time, kind: m ? m[1].replace(/[:( ]+$/, '') : 'text', text: rest });
      else out[out.length - 1].text += `\n${rest}`;
    }
  }
  return out;
}

function Output({ jobId, attempt, find, epoch, onAttempt }) {
  const [chunks, setChunks] = useState({ lines: [], attempt: null, attempts: 0 });
  const [unfold, setUnfold] = useState(false);
  const box = useRef(null);
  const stick = useRef(true);
  useEffect(() => {
    setChunks({ lines: [], attempt: null, attempts: 0 });
    return outputStream(jobId, attempt, (c) => setChunks((old) => ({
      lines: c.lines.length ? [...old.lines, ...c.lines].slice(-3000) : old.lines, attempt: c.attempt, attempts: c.attempts,
    })));
  }, [jobId, attempt, epoch]);
  const entries = useMemo(() => entriesOf(chunks.lines), [chunks.lines]);
  const terms = useMemo(() => (find ?? []).map((t) => t.toLowerCase()).filter(Boolean), [find]);
  const hit = (e) => terms.length && terms.some((t) => e.text.toLowerCase().includes(t));
  useEffect(() => {
    const b = box.current;
    if (!b) return;
    const first = terms.length && b.querySelector('.hit');
    if (first) first.scrollIntoView({ block: 'center' });
    else if (stick.current) b.scrollTop = b.scrollHeight;
  }, [entries.length]);
  return html`<div class="output-tools">
      ${chunks.attempts > 1 ? html`<label>Attempt <select value=${attempt ?? ''} onChange=${(e) => onAttempt(e.target.value ? Number(e.target.value) : null)}>
        <option value="">latest (${chunks.attempts})</option>${Array.from({ length: chunks.attempts }, (_, i) => html`<option value=${i + 1}>${i + 1}</option>`)}</select></label>` : ''}
      <label><input type="checkbox" checked=${unfold} onChange=${(e) => setUnfold(e.target.checked)} /> unfold tool calls</label>
    </div>
    <div class="output" ref=${box} data-testid="output" tabindex="0" role="log" aria-label="Output"
      onScroll=${(e) => { const b = e.currentTarget; stick.current = b.scrollTop + b.clientHeight >= b.scrollHeight - 24; }}>
      ${entries.map((e) => {
        const cls = `line k-${e.kind}${hit(e) ? ' hit' : ''}`;
        if (!TOOL.test(e.kind)) return html`<div class=${cls}><time>${e.time}</time><span class="body">${e.text}</span></div>`;
        const [head, ...more] = e.text.split('\n');
        return html`<details class=${`${cls} tool`} open=${unfold || hit(e)}><summary><time>${e.time}</time><span class="body">${head}</span></summary>${more.length || head.length > 100 ? html`<pre>${e.text}</pre>` : ''}</details>`;
      })}
      ${!entries.length ? html`<p class="muted">No output yet.</p>` : ''}
    </div>`;
}

/** One file's patch, its lines coloured by diff role and highlighted by language. */
function Patch({ file }) {
  const lang = langOf(file.path);
  const rows = useMemo(() => {
    const lines = file.patch.split('\n');
    let oldState = null;
    let newState = null;
    let body = false;
    return lines.slice(0, 4000).map((l) => {
      if (l.startsWith('@@')) { body = true; oldState = null; newState = null; return { cls: 'hunk', tokens: [['', l]] }; }
      if (!body || l.startsWith('\\')) return { cls: 'meta', tokens: [['', l]] };
      const sign = l[0] ?? ' ';
      const code = l.slice(1);
      if (sign === '+') { const r = highlightLine(code, lang, newState); newState = r.state; return { cls: 'add', sign, tokens: r.tokens }; }
      if (sign === '-') { const r = highlightLine(code, lang, oldState); oldState = r.state; return { cls: 'del', sign, tokens: r.tokens }; }
      const r = highlightLine(code, lang, newState);
      newState = r.state;
      oldState = highlightLine(code, lang, oldState).state;
      return { cls: 'ctx', sign: ' ', tokens: r.tokens };
    });
  }, [file.patch, lang]);
  const adds = rows.filter((r) => r.cls === 'add').length;
  const dels = rows.filter((r) => r.cls === 'del').length;
  const more = file.patch.split('\n').length - rows.length;
  return html`<details open class="file" data-path=${file.path}><summary><span class="path">${file.path}</span> <span class="ok">+${adds}</span> <span class="bad">−${dels}</span>${lang ? html` <span class="muted">${lang}</span>` : ''}</summary>
    <pre class=${`diff lang-${lang ?? 'plain'}`}>${rows.map((r) => html`<div class=${r.cls}>${r.sign ?? ''}${r.tokens.map(([c, s]) => (c ? html`<span class=${`t-${c}`}>${s}</span>` : s))}</div>`)}${more > 0 ? html`<div class="meta">… ${more} more lines</div>` : ''}</pre></details>`;
}

export function Changes({ jobId, status }) {
  const [diff, setDiff] = useState(null);
  const [err, setErr] = useState('');
  useEffect(() => { setDiff(null); setErr(''); get(`/api/web/jobs/${enc(jobId)}/diff`).then(setDiff, (e) => setErr(e.message)); }, [jobId, status]);
  if (err) return html`<p class="error">${err}</p>`;
  if (!diff) return html`<p class="muted">Loading the diff…</p>`;
  return html`<div class="changes" data-testid="changes"><p class="muted">${diff.title}</p>
    ${!diff.files.length && !diff.untracked.length ? html`<p>No changes.</p>` : ''}
    ${diff.untracked.length ? html`<p>New, untracked: ${diff.untracked.join(', ')}</p>` : ''}
    ${diff.files.map((f) => html`<${Patch} key=${f.path} file=${f} />`)}
  </div>`;
}

function Details({ d }) {
  if (!d) return html`<p class="muted">Loading…</p>`;
  return html`<div class="details" data-testid="details"><dl>
    <dt>status</dt><dd>${d.status}${d.failure_class ? ` (${d.failure_class})` : ''}</dd>
    <dt>provider</dt><dd>${d.provider}${d.model ? ` · ${d.model}` : ''}</dd>
    ${d.host ? html`<dt>host</dt><dd data-testid="host">${d.host}</dd>` : ''}
    ${d.model_choice ? html`<dt>model choice</dt><dd data-testid="model-choice">auto → ${d.model_choice.fallback ? 'fallback' : d.model_choice.tier}: ${d.model_choice.reason}</dd>` : ''}
    <dt>cost</dt><dd>${d.cost_usd === null ? 'unknown (unpriced model)' : `$${d.cost_usd}`} · ${tokens(d.input_tokens)} in · ${tokens(d.output_tokens)} out${d.total_cost_usd !== undefined && d.total_cost_usd !== d.cost_usd ? ` · with the hub's runs $${d.total_cost_usd}` : ''}</dd>
    <dt>created</dt><dd>${when(d.created_at)}${d.ended_at ? ` · ended ${when(d.ended_at)}` : ''}</dd>
    ${d.labels?.length ? html`<dt>labels</dt><dd>${d.labels.join(', ')}</dd>` : ''}
    ${d.depends_on?.length ? html`<dt>depends on</dt><dd>${d.depends_on.join(', ')}</dd>` : ''}
    ${d.branch ? html`<dt>branch</dt><dd>${d.branch}</dd>` : ''}
    ${d.pr_url ? html`<dt>PR</dt><dd><a href=${d.pr_url} rel="noreferrer">${d.pr_url}</a></dd>` : ''}
    ${d.result ? html`<dt>result</dt><dd class="pre">${d.result}</dd>` : ''}
    ${d.error ? html`<dt>error</dt><dd class="pre">${d.error}</dd>` : ''}
    ${(d.warnings ?? []).map((w) => html`<dt>warning</dt><dd class="warn">${w.kind}: ${w.detail}</dd>`)}
  </dl>
  <h4>Attempts</h4><ol>${d.attempts.map((a) => html`<li>${a.kind} · ${a.status}${a.failure_class ? ` (${a.failure_class})` : ''} · ${a.turns} turns · $${a.cost_usd}${a.error ? ` — ${a.error}` : ''}${a.diagnosis ? html`<div class="muted pre">diagnosis: ${a.diagnosis}</div>` : ''}</li>`)}</ol>
  ${d.hub_usage?.length ? html`<h4>The hub's runs for it</h4><ul>${d.hub_usage.map((u) => html`<li>${u.kind}${u.attempt ? ` (attempt ${u.attempt})` : ''} · ${u.model ?? ''} · ${u.cost_usd === null ? 'unpriced' : `$${u.cost_usd}`}</li>`)}</ul>` : ''}
  ${d.requests?.length ? html`<h4>Requests</h4><ul>${d.requests.map((r) => html`<li>${r.kind} · ${r.status}${r.decision ? ` (${r.decision})` : ''}${r.answer ? `: ${r.answer}` : ''} — ${r.summary}</li>`)}</ul>` : ''}
  <h4>Events</h4><ol class="events">${(d.events ?? []).map((e) => html`<li><time>${(e.at ?? '').slice(11, 19)}</time> ${e.kind} ${e.data ? JSON.stringify(e.data).slice(0, 160) : ''}</li>`)}</ol></div>`;
}

/** The header fields from a get_agent summary, for a job that is not on the floor. */
const fromSummary = (s) => s && ({
  job_id: s.job_id, title: s.title, status: s.status, provider: s.provider, model: s.model, turns: s.turns, cost_usd: s.cost_usd ?? 0, cost_unknown: s.cost_usd === null,
  elapsed_ms: s.started_at ? (s.ended_at ? Date.parse(s.ended_at) : Date.now()) - Date.parse(s.started_at) : null,
});

export function AgentPanel({ jobId, floorJob, attempt, find, epoch, tick, onAttempt, onClose, onOpen, say }) {
  const [tab, setTab] = useState('output');
  const [text, setText] = useState('');
  const [d, setD] = useState(null);
  const [err, setErr] = useState('');
  // The summary: again whenever the job moves on the floor (or on every frame when it is not on it), and after a reconnect.
  const moved = floorJob ? `${floorJob.status}:${floorJob.turns}:${floorJob.cost_usd}` : `off:${ENDED.has(d?.status) ? '' : tick}`;
  useEffect(() => { get(`/api/web/jobs/${enc(jobId)}`).then((x) => { setD(x); setErr(''); }, (e) => setErr(e.message)); }, [jobId, moved, epoch]);
  const job = floorJob ?? fromSummary(d);
  const act = async (what, body) => {
    try { await post(`/api/web/jobs/${enc(jobId)}/${what}`, body); say(`${what}: done`); } catch (e) { say(e.message, true); }
  };
  const close = html`<button class="close" onClick=${onClose} aria-label="Close the panel (Esc)">×</button>`;
  if (!job) return html`<aside class="panel" aria-label="Agent" data-testid="panel"><header>${close}<p class=${err ? 'error' : 'muted'}>${err || 'Loading…'}</p></header></aside>`;
  const ended = ENDED.has(job.status);
  return html`<aside class="panel" aria-label=${`Agent ${job.title}`} data-testid="panel" data-job=${job.job_id}>
    <header><h2><span class=${`dot ${tone(job.status)}`}></span>${job.title}</h2>
      <p class="muted meta">${job.job_id} · ${job.status} · ${job.provider}${job.model ? `/${job.model}` : ''} · ${ago(job.elapsed_ms)} · ${job.turns} turns · ${usd(job.cost_usd, job.cost_unknown)}</p>
      ${close}</header>
    <div class="actions">
      ${!ended ? html`<form onSubmit=${(e) => { e.preventDefault(); if (text.trim()) { act('message', { text }); setText(''); } }}>
        <input aria-label="Message to the agent" placeholder="Message…" value=${text} onInput=${(e) => setText(e.target.value)} /><button>Send</button></form>` : ''}
      ${job.status === 'running' ? html`<button onClick=${() => act('pause', { mode: 'freeze' })}>Pause</button>` : ''}
      ${job.status === 'frozen' || job.status === 'interrupted' ? html`<button onClick=${() => act('resume', {})}>Resume</button>` : ''}
      ${ended ? html`<form data-testid="continue" onSubmit=${(e) => { e.preventDefault(); if (text.trim()) { act('resume', { message: text }); setText(''); } }}>
        <input aria-label="Continue with a message" placeholder="Continue with…" value=${text} onInput=${(e) => setText(e.target.value)} /><button>Continue</button></form>
        <button data-testid="rerun" onClick=${async () => { try { const r = await post(`/api/web/jobs/${enc(jobId)}/rerun`, {}); say(`re-run as ${r.job_id}`); onOpen?.(r.job_id); } catch (e) { say(e.message, true); } }}>Re-run</button>` : ''}
      ${!ended ? html`<button class="danger" onClick=${() => { if (confirm(`Cancel "${job.title}" and its sub-agents?`)) act('cancel', {}); }}>Cancel</button>` : ''}
    </div>
    <nav role="tablist" aria-label="Agent views">${['output', 'changes', 'details'].map((t) => html`<button role="tab" aria-selected=${tab === t} onClick=${() => setTab(t)}>${t[0].toUpperCase() + t.slice(1)}</button>`)}</nav>
    ${tab === 'output' ? html`<${Output} jobId=${jobId} attempt=${attempt} find=${find} epoch=${epoch} onAttempt=${onAttempt} />`
      : tab === 'changes' ? html`<${Changes} jobId=${jobId} status=${job.status} />` : html`<${Details} d=${d} />`}
  </aside>`;
}
