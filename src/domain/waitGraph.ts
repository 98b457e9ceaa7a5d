// Deadlock detection for file locks. The wait-for graph has an edge W → H (labelled with path p)
// when W waits for p and H holds p. A lock request that would close a cycle through the
// requester can never be granted, so lock_files refuses it at once and names the cycle.
// Pure: the caller passes the facts (holders and waiters) and gets back the cycle or null.
// Breadth-first, so the cycle returned is a shortest one; O(nodes + edges).

/** What the lock table knows: who holds each path, and what each waiter waits for. */
export interface LockFacts {
  /** path → holder id */
  holders: ReadonlyMap<string, string>;
  /** waiter id → paths it waits for (a waiter waits on every holder of those paths) */
  waiting: ReadonlyMap<string, readonly string[]>;
}

/** One edge of a cycle: `waiter` waits for `holder`, who holds `path`. */
export interface CycleEdge {
  waiter: string;
  holder: string;
  path: string;
}

/** Would `requester` waiting for `paths` close a cycle? The cycle as edges starting at the requester, or null. Holders equal to their waiter are ignored. */
export function findCycle(facts: LockFacts, requester: string, paths: readonly string[]): CycleEdge[] | null {
  // The edge by which each node was first reached (BFS tree); the requester is the root.
  const via = new Map<string, CycleEdge>();
  const queue: string[] = [requester];
  const visited = new Set<string>([requester]);
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head] as string;
    const wants = node === requester ? paths : (facts.waiting.get(node) ?? []);
    for (const p of wants) {
      const holder = facts.holders.get(p);
      if (holder === undefined || holder === node) continue;
      const edge: CycleEdge = { waiter: node, holder, path: p };
      if (holder === requester) return unwind(via, edge, requester);
      if (visited.has(holder)) continue;
      visited.add(holder);
      via.set(holder, edge);
      queue.push(holder);
    }
  }
  return null;
}

function unwind(via: ReadonlyMap<string, CycleEdge>, last: CycleEdge, requester: string): CycleEdge[] {
  const edges: CycleEdge[] = [last];
  let node = last.waiter;
  while (node !== requester) {
    const e = via.get(node);
    if (!e) break; // unreachable: every visited node but the requester has an edge
    edges.push(e);
    node = e.waiter;
  }
  return edges.reverse();
}

/** Human text: "j-a waits for j-b (holds src/x.ts), j-b waits for j-a (holds src/y.ts)". */
export function describeCycle(cycle: CycleEdge[]): string {
  return cycle.map((e) => `${e.waiter} waits for ${e.holder} (holds ${e.path})`).join(', ');
}
