// Benchmark: one pass of the lock mounts (src/confine/lockMounts.ts) with 50 locks and 8 running
// children, the mount helper injected (instant), so what is measured is the hub's own work per pass:
// the mapping of each lock onto each child's checkout and the stats of the files. 50 locks taken
// by one holder in clone 1 of a repository; 4 children in clone 2 (each gets the 50 copies too), 4
// in another repository. Steady passes (nothing to change) and passes where one lock came and went.
// Run alone: node --import tsx bench/lock-mount-pass.ts
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LockMounts } from '../src/confine/lockMounts.js';
import { ChildScopes } from '../src/confine/childScopes.js';
import type { HeldLock } from '../src/confine/lockMap.js';
import { RepoScopes } from '../src/services/repoScope.js';
import { silentLogger } from '../src/log.js';
import { f1, out, removeDir, stats, tempDir } from './common.js';

const LOCKS = 50;
const CHILDREN = 8;
const PASSES = 400;

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' });

async function main(): Promise<void> {
  const dir = await tempDir('overseer-bench-lockpass-');
  try {
    for (const r of ['origin', 'other']) {
      const root = path.join(dir, r);
      mkdirSync(path.join(root, 'src'), { recursive: true });
      for (let i = 0; i < LOCKS; i++) writeFileSync(path.join(root, 'src', `f${i}.ts`), `// ${i}\n`);
      git(root, 'init', '-q');
      git(root, 'add', '.');
      git(root, 'commit', '-qm', 'first');
    }
    git(dir, 'clone', '-q', path.join(dir, 'origin'), 'c1');
    git(dir, 'clone', '-q', path.join(dir, 'origin'), 'c2');
    const items = await new RepoScopes().items(Array.from({ length: LOCKS }, (_, i) => path.join(dir, 'c1', 'src', `f${i}.ts`)));
    const held: HeldLock[] = items.map((i) => ({ path: i.path, holder: 'j-h', repo: i.repo, rel: i.rel }));
    const running = Array.from({ length: CHILDREN }, (_, k) => ({ jobId: `j-${k}`, pid: 100 + k, tree: path.join(dir, k % 2 ? 'c2' : 'other') }));
    let helperRuns = 0;
    const m = new LockMounts({
      held: async () => held, running: async () => running, scopes: new ChildScopes(), nsPid: (p) => p, log: silentLogger, now: () => 0,
      helper: async () => { helperRuns++; return { ok: true, stderr: '' }; },
    });
    await m.sync(); // the first pass: every child's scope looked up, everything bound
    const bound = running.reduce((n, r) => n + m.mountedFor(r.jobId).length, 0);
    const steady: number[] = [];
    for (let i = 0; i < PASSES; i++) {
      const t = performance.now();
      await m.sync();
      steady.push((performance.now() - t) * 1000);
    }
    const changed: number[] = [];
    const extra = held.pop()!;
    for (let i = 0; i < PASSES; i++) {
      if (i % 2) held.push(extra);
      else held.splice(held.indexOf(extra), 1);
      const t = performance.now();
      await m.sync();
      changed.push((performance.now() - t) * 1000);
    }
    const s = stats(steady);
    const c = stats(changed);
    out(`lock-mount pass, ${LOCKS} locks × ${CHILDREN} children (${bound} paths bound, helper injected): ` +
      `steady median ${f1(s.p50)} µs (p90 ${f1(s.p90)}), one lock changed median ${f1(c.p50)} µs (p90 ${f1(c.p90)}); helper runs ${helperRuns}\n`);
  } finally {
    await removeDir(dir);
  }
}

void main();
