// A real terminal for end-to-end tests of full-screen commands: a detached tmux session on a
// server of its own (-L <unique socket>, no user config), the screen read with capture-pane,
// keys sent with send-keys, and waits on what the screen shows, with deadlines.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Terminal {
  /** The screen as plain text, one string per row. */
  screen(): string[];
  /** Sends keys (tmux key names: 'Enter', 'Escape', 'Down', or literal text with literal: true). */
  keys(keys: string[], o?: { literal?: boolean }): void;
  /** Resolves with the screen once `pred` holds for it; fails after `timeoutMs` showing the last screen. */
  waitFor(what: string, pred: (screen: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Whether the command in the pane has exited, and its exit status. */
  exited(): { dead: boolean; status: number | null };
  /** Pid of the command running in the pane. */
  pid(): number;
  kill(): void;
}

export function tmuxAvailable(): boolean {
  return spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
}

/** Starts `command` (argv) in a `width`×`height` terminal, with `env` as its whole environment. */
export function startTerminal(command: string[], o: { cwd: string; env: NodeJS.ProcessEnv; width?: number; height?: number }): Terminal {
  const socket = `ovs-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmux = (args: string[]): string => {
    const r = spawnSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { cwd: o.cwd, env: o.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tmux ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  // tmux 3.3 leaves #{pane_dead_status} empty, so a small shell runs the command and writes its
  // exit status to a file; pid() is the command's, the shell's only child.
  const statusFile = join(mkdtempSync(join(tmpdir(), 'ovs-tmux-')), 'status');
  const q = (a: string): string => `'${a.replace(/'/g, `'\\''`)}'`;
  const quoted = ['sh', '-c', `"$@"; echo $? > ${q(statusFile)}`, 'sh', ...command].map(q).join(' ');
  // remain-on-exit keeps the pane (and its last screen) after the command ends.
  tmux(['start-server', ';', 'set-option', '-g', 'remain-on-exit', 'on', ';',
    'new-session', '-d', '-s', 'w', '-x', String(o.width ?? 100), '-y', String(o.height ?? 30), '-c', o.cwd, quoted]);
  const screen = (): string[] => tmux(['capture-pane', '-p', '-t', 'w']).replace(/\n$/, '').split('\n');
  return {
    screen,
    keys(keys, k = {}) { tmux(['send-keys', '-t', 'w', ...(k.literal ? ['-l'] : []), ...keys]); },
    async waitFor(what, pred, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const s = screen().join('\n');
        if (pred(s)) return s;
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for the screen to show ${what}; it shows:\n${s}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    exited() {
      const dead = tmux(['display-message', '-p', '-t', 'w', '#{pane_dead}']).trim() === '1';
      let status: number | null = null;
      try { status = Number(readFileSync(statusFile, 'utf8').trim()); } catch { /* not yet */ }
      return { dead: dead && status !== null, status };
    },
    pid: () => {
      const sh = Number(tmux(['display-message', '-p', '-t', 'w', '#{pane_pid}']).trim());
      const child = readFileSync(`/proc/${sh}/task/${sh}/children`, 'utf8').trim().split(/\s+/)[0];
      return child ? Number(child) : sh;
    },
    kill() {
      spawnSync('tmux', ['-L', socket, 'kill-server'], { env: o.env });
      // tmux leaves its socket file behind when its server is killed.
      rmSync(join(o.env.TMUX_TMPDIR ?? '/tmp', `tmux-${process.getuid?.() ?? 0}`, socket), { force: true });
    },
  };
}
