// The adversarial suite's shared tally: every attack is counted per category as "refused
// correctly" or as a finding. node --test runs each file in its own process, so each file
// writes its part to <tmp>/overseer-adversarial/<run>/<file>.json, where <run> is the pid of the
// `node --test` process that runs them all (a file run alone is a run of its own); `printTally`
// (run in each file's `after`) merges the parts of this run only — never a stale one from an
// earlier run — prints the table and writes the merged JSON.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Row { attempts: number; refused: number; findings: string[] }
export type Tally = Record<string, Row>;

// Files under one `node --test` share its pid as their parent; a file run directly is alone.
const run = process.env.NODE_TEST_CONTEXT ? String(process.ppid) : `solo-${process.pid}`;
const dir = join(tmpdir(), 'overseer-adversarial', run);
export const TALLY_FILE = join(tmpdir(), 'overseer-adversarial.json');
const mine: Tally = {};

function row(category: string): Row {
  return (mine[category] ??= { attempts: 0, refused: 0, findings: [] });
}

/** One attack that was refused (or held) as it must be. */
export function refused(category: string, n = 1): void {
  const r = row(category);
  r.attempts += n;
  r.refused += n;
}

/** One attack that got through: `what` is a one-line reproduction. */
export function finding(category: string, what: string): void {
  const r = row(category);
  r.attempts += 1;
  r.findings.push(what);
}

/** Writes this file's part, merges all parts, prints the table (stderr) and writes TALLY_FILE. */
export function printTally(part: string): Tally {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${part}.json`), JSON.stringify(mine, null, 1));
  const all: Tally = {};
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
    const t = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Tally;
    for (const [cat, r] of Object.entries(t)) {
      const a = (all[cat] ??= { attempts: 0, refused: 0, findings: [] });
      a.attempts += r.attempts;
      a.refused += r.refused;
      a.findings.push(...r.findings);
    }
  }
  writeFileSync(TALLY_FILE, JSON.stringify(all, null, 1));
  const lines = ['', `adversarial tally (${TALLY_FILE})`, 'category              attempts  refused  findings'];
  for (const [cat, r] of Object.entries(all).sort()) lines.push(`${cat.padEnd(22)}${String(r.attempts).padStart(8)}${String(r.refused).padStart(9)}${String(r.findings.length).padStart(10)}`);
  for (const [cat, r] of Object.entries(all).sort()) for (const f of r.findings) lines.push(`  FINDING [${cat}] ${f}`);
  process.stderr.write(`${lines.join('\n')}\n`);
  return all;
}

/**
 * Checks of one category against a list of KNOWN findings (open bugs owned elsewhere): every
 * check is tallied; `assertOnlyKnown` fails on any failing check not in the list and prints the
 * known ones that now hold (remove them from the list).
 */
export class Checks {
  readonly failed: string[] = [];
  readonly held: string[] = [];
  constructor(readonly category: string, readonly known: readonly string[] = []) {}

  /** Records `label`: `ok` means the attack was refused / the property held. Returns `ok`. */
  check(label: string, ok: boolean, detail = ''): boolean {
    if (ok) {
      refused(this.category);
      this.held.push(label);
    } else {
      finding(this.category, `${label}${detail ? ` — ${detail.slice(0, 160)}` : ''}${this.known.includes(label) ? ' (KNOWN)' : ''}`);
      this.failed.push(label);
    }
    return ok;
  }

  assertOnlyKnown(assertFn: (unexpected: string[]) => void): void {
    const fixed = this.known.filter((k) => this.held.includes(k));
    if (fixed.length) process.stderr.write(`[${this.category}] KNOWN findings that now hold (remove from the list): ${fixed.join('; ')}\n`);
    const knownNow = this.failed.filter((f) => this.known.includes(f));
    if (knownNow.length) process.stderr.write(`[${this.category}] KNOWN findings still open:\n${knownNow.map((k) => `  - ${k}`).join('\n')}\n`);
    assertFn(this.failed.filter((f) => !this.known.includes(f)));
  }
}
