// Layout of the job graph (no graph library): nodes in columns by depth — a node's column is one
// more than the deepest of the nodes it comes after (its parent, its dependencies), cycles
// broken by input order — then each column ordered by the mean row of its predecessors
// (two sweeps) to keep edges short, and every edge a curve from the right side of its source to
// the left side of its target. Pure: nodes and edges in, coordinates out.

/**
 * @param {{ id: string }[]} nodes in a stable order (oldest first)
 * @param {{ from: string, to: string, kind: string }[]} edges
 */
export function layoutGraph(nodes, edges, o = {}) {
  const W = o.nodeW ?? 200;
  const H = o.nodeH ?? 46;
  const GX = o.gapX ?? 70;
  const GY = o.gapY ?? 14;
  const ids = new Set(nodes.map((n) => n.id));
  const es = edges.filter((e) => ids.has(e.from) && ids.has(e.to) && e.from !== e.to);
  const preds = new Map(nodes.map((n) => [n.id, []]));
  const succs = new Map(nodes.map((n) => [n.id, []]));
  for (const e of es) { preds.get(e.to).push(e.from); succs.get(e.from).push(e.to); }
  // Longest path from the sources (Kahn's order); what a cycle leaves over is placed after its known predecessors.
  const layer = new Map();
  const indeg = new Map(nodes.map((n) => [n.id, preds.get(n.id).length]));
  const queue = nodes.filter((n) => indeg.get(n.id) === 0).map((n) => n.id);
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i];
    layer.set(id, Math.max(0, ...preds.get(id).map((p) => (layer.get(p) ?? -1) + 1)));
    for (const s of succs.get(id)) { indeg.set(s, indeg.get(s) - 1); if (indeg.get(s) === 0) queue.push(s); }
  }
  for (const n of nodes) if (!layer.has(n.id)) layer.set(n.id, Math.max(0, ...preds.get(n.id).map((p) => (layer.has(p) ? layer.get(p) + 1 : 0))));
  const cols = [];
  for (const n of nodes) (cols[layer.get(n.id)] ??= []).push(n.id);
  const row = new Map();
  const place = () => cols.forEach((c) => c.forEach((id, i) => row.set(id, i)));
  place();
  for (let sweep = 0; sweep < 2; sweep++) {
    for (let c = 1; c < cols.length; c++) {
      const col = cols[c] ?? [];
      const key = (id) => { const p = preds.get(id).filter((x) => layer.get(x) < c); return p.length ? p.reduce((s, x) => s + row.get(x), 0) / p.length : row.get(id); };
      const keyed = col.map((id, i) => ({ id, k: key(id), i }));
      keyed.sort((a, b) => a.k - b.k || a.i - b.i);
      cols[c] = keyed.map((x) => x.id);
      place();
    }
  }
  const pos = new Map();
  cols.forEach((c, ci) => (c ?? []).forEach((id, ri) => pos.set(id, { x: ci * (W + GX), y: ri * (H + GY) })));
  const tall = Math.max(1, ...cols.map((c) => c?.length ?? 0));
  const out = nodes.map((n) => ({ ...n, ...pos.get(n.id), layer: layer.get(n.id) }));
  const paths = es.map((e) => {
    const a = pos.get(e.from);
    const b = pos.get(e.to);
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
    const dx = Math.max(30, Math.abs(x2 - x1) / 2);
    const d = x2 > x1 ? `M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`
      // Same column or backwards (a cycle): around the outside.
      : `M${a.x + W / 2},${a.y + H} C${a.x + W / 2},${a.y + H + 40} ${b.x + W / 2},${b.y - 40} ${b.x + W / 2},${b.y}`;
    return { ...e, d };
  });
  return { width: Math.max(W, cols.length * (W + GX) - GX), height: tall * (H + GY) - GY, nodes: out, edges: paths, nodeW: W, nodeH: H };
}
