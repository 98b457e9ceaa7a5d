// The Graph view: the most recent jobs as a picture — an arrow from each dependency to the job
// that waits for it (solid) and from each parent to the child it spawned (dashed), boxes
// coloured by status, laid out in columns by depth (layout.js). A box opens the agent panel.
import { html } from 'htm/preact';
import { useMemo, useState } from 'preact/hooks';
import { useLive } from './hooks.js';
import { tone } from './format.js';
import { layoutGraph } from './layout.js';

const cut = (s, n) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export default function Graph({ tick, onOpen, open }) {
  const [limit, setLimit] = useState(50);
  const [kinds, setKinds] = useState({ dep: true, parent: true });
  const { data, error } = useLive(`/api/web/graph?limit=${limit}`, tick, 1000);
  const g = useMemo(() => data && layoutGraph(data.nodes.map((n) => ({ ...n, id: n.job_id })), data.edges.filter((e) => kinds[e.kind])), [data, kinds]);
  if (error && !data) return html`<p class="error">${error}</p>`;
  if (!g) return html`<p class="muted">Loading…</p>`;
  if (!g.nodes.length) return html`<p class="muted">No jobs yet.</p>`;
  const pad = 12;
  return html`<div class="graph">
    <div class="toolbar"><label>Jobs <select value=${limit} onChange=${(e) => setLimit(Number(e.target.value))}>${[20, 50, 100, 200].map((n) => html`<option value=${n}>last ${n}</option>`)}</select></label>
      <label><input type="checkbox" checked=${kinds.dep} onChange=${(e) => setKinds({ ...kinds, dep: e.target.checked })} /> dependencies</label>
      <label><input type="checkbox" checked=${kinds.parent} onChange=${(e) => setKinds({ ...kinds, parent: e.target.checked })} /> parent → child</label>
      <span class="muted">${data.edges.filter((e) => e.kind === 'dep').length} dependencies · ${data.edges.filter((e) => e.kind === 'parent').length} parent links</span></div>
    <div class="graph-box scroll-x">
      <svg width=${g.width + pad * 2} height=${g.height + pad * 2} viewBox=${`${-pad} ${-pad} ${g.width + pad * 2} ${g.height + pad * 2}`} role="group" aria-label="Job graph" data-testid="graph" data-nav-group>
        <defs>${['dep', 'parent'].map((k) => html`<marker id=${`arrow-${k}`} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class=${`arrowhead ${k}`} /></marker>`)}</defs>
        ${g.edges.map((e) => html`<path class=${`edge ${e.kind}`} d=${e.d} data-from=${e.from} data-to=${e.to} marker-end=${`url(#arrow-${e.kind})`}><title>${e.kind === 'dep' ? `${e.to} depends on ${e.from}` : `${e.from} spawned ${e.to}`}</title></path>`)}
        ${g.nodes.map((n) => html`<g class=${`node ${tone(n.status)} nav-item${n.job_id === open ? ' selected' : ''}`} transform=${`translate(${n.x},${n.y})`} data-job=${n.job_id} data-status=${n.status}
            tabindex="0" role="button" aria-label=${`${n.title}, ${n.status}`} onClick=${() => onOpen(n.job_id)}
            onKeyDown=${(e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); onOpen(n.job_id); } }}>
          <rect width=${g.nodeW} height=${g.nodeH} rx="6" /><rect class="stripe" width="5" height=${g.nodeH} rx="2" />
          <text x="12" y="18" class="t1">${cut(n.title, 26)}</text>
          <text x="12" y="35" class="t2">${n.status}${n.phase ? ` · ${n.phase}` : ''} · ${n.job_id.slice(0, 10)}</text>
          <title>${n.title} (${n.job_id}) · ${n.status}</title></g>`)}
      </svg>
    </div></div>`;
}
