// What a shell command means, for the permission policy's built-in dangers (`match` rules):
// decided on the program's basename, its flags in any order and any spelling (`-rf`, `-r -f`,
// `--recursive --force`), after `--`, wrappers (`env`, `command`, `nice`, `sudo -u x`, `xargs`…),
// substitutions and `sh -c` — never on how the command happens to be spelled. Pure; never throws.
import path from 'node:path';
import { parse } from 'shell-quote';
import { bashWriteTargets, simpleCommands } from './bashTargets.js';

/** One simple command: its program's basename and its words after the program. */
export interface Cmd {
  prog: string;
  args: string[];
}

const HOME_VAR = /(["']?)\$(?:\{HOME\}|HOME\b)\1/g;
const ASSIGN = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'fish', 'ash', 'busybox']);
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'https', 'lwp-download', 'lynx', 'nc', 'ncat']);
/** A downloader named inside quotes or a substitution, where the command splitter does not look. */
const DOWNLOADER_WORD = /(?:^|[\s"'`(;&|])(?:curl|wget|aria2c)(?=[\s"'`)]|$)/;
const BLOCK_DEVICE = /^\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk|mapper\/|loop|md|dm-)/;

/** Every simple command of `command`, nested ones included (wrappers, substitutions, `sh -c`). */
export function commandsOf(command: string): Cmd[] {
  const withHome = command.replace(HOME_VAR, '~');
  const out: Cmd[] = [];
  for (const seg of simpleCommands(withHome)) {
    let words: string[];
    try {
      words = parse(seg.text, (k) => `$${k}`).flatMap((w) => (typeof w === 'string' ? [w] : 'op' in w && w.op === 'glob' ? [w.pattern] : []));
    } catch {
      words = seg.text.split(/\s+/);
    }
    while (words.length && ASSIGN.test(words[0] as string)) words.shift();
    if (!words.length) continue;
    out.push({ prog: path.posix.basename(words[0] as string), args: words.slice(1) });
  }
  return out;
}

/** Options (before `--`) split into single flags: `-rf` → `-r`, `-f`; long ones as written (without `=value`). */
export function flagsOf(args: readonly string[]): Set<string> {
  const flags = new Set<string>();
  for (const a of args) {
    if (a === '--') break;
    if (a.startsWith('--')) flags.add(a.split('=')[0] as string);
    else if (/^-[A-Za-z0-9]+$/.test(a)) for (const c of a.slice(1)) flags.add(`-${c}`);
  }
  return flags;
}

/** Operands: words that are not options (everything after `--`). */
export function operandsOf(args: readonly string[]): string[] {
  const out: string[] = [];
  let opts = true;
  for (const a of args) {
    if (opts && a === '--') { opts = false; continue; }
    if (opts && a.startsWith('-') && a !== '-') continue;
    out.push(a);
  }
  return out;
}

/** `/`, `//`, `/.`, `/*`, `~`, `~/`, `~/*`, `~/.`, `/home`… → whether it names the root or the home directory (or all of it). */
function isRootOrHome(operand: string): boolean {
  let p = operand.replace(/\/+/g, '/');
  while (p.length > 1 && (p.endsWith('/.') || p.endsWith('/'))) p = p.endsWith('/.') ? p.slice(0, -2) || '/' : p.slice(0, -1);
  if (p.endsWith('/*')) p = p.slice(0, -2) || '/';
  if (p === '*' || p === '') return false;
  return p === '/' || p === '~' || p === '/home' || p === '/root' || p === '/usr' || p === '/etc' || p === '/var' || p === '/boot' || p === '/bin' || p === '/lib';
}

/** `git [global options] <sub> …` → the subcommand and its arguments. */
function gitSub(args: readonly string[]): { sub: string; rest: string[] } | undefined {
  const WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--super-prefix', '--config-env']);
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (WITH_VALUE.has(a)) { i++; continue; }
    if (a.startsWith('-')) continue;
    return { sub: a, rest: args.slice(i + 1) };
  }
  return undefined;
}

type Predicate = (cmds: Cmd[], command: string) => boolean;

const rmRootOrHome: Predicate = (cmds) => cmds.some((c) => {
  if (c.prog !== 'rm') return false;
  const f = flagsOf(c.args);
  if (f.has('--no-preserve-root')) return true;
  const recursive = f.has('-r') || f.has('-R') || f.has('--recursive');
  return recursive && operandsOf(c.args).some(isRootOrHome);
});

const privilege: Predicate = (cmds) => cmds.some((c) => ['sudo', 'doas', 'su', 'pkexec', 'run0'].includes(c.prog));

const isPush = (c: Cmd): string[] | undefined => {
  if (c.prog !== 'git') return undefined;
  const g = gitSub(c.args);
  return g?.sub === 'push' ? g.rest : undefined;
};

const forcePush: Predicate = (cmds) => cmds.some((c) => {
  const rest = isPush(c);
  if (!rest) return false;
  const f = flagsOf(rest);
  return f.has('-f') || [...f].some((x) => x.startsWith('--force') || x === '--mirror' || x === '--delete') || f.has('-d')
    || operandsOf(rest).some((o) => o.startsWith('+') || o.startsWith(':'));
});

const gitPush: Predicate = (cmds) => cmds.some((c) => isPush(c) !== undefined);

/** A downloader somewhere, and a shell (or eval/source) that runs program text it did not read from a file. */
const downloadToShell: Predicate = (cmds, command) => {
  if (!cmds.some((c) => DOWNLOADERS.has(c.prog)) && !DOWNLOADER_WORD.test(command)) return false;
  const substituted = /<\(|\$\(|`/.test(command);
  if (/(?:^|[\s;&|(])(?:eval|source|\.)\s/.test(command)) return true;
  return cmds.some((c) => {
    if (!SHELLS.has(c.prog)) return false;
    const ops = operandsOf(c.args);
    const f = flagsOf(c.args);
    if (f.has('-c')) return substituted;
    return f.has('-s') || ops.length === 0 || ops[0] === '-' || ops[0]?.startsWith('/dev/fd/') === true || (substituted && /^[<$`]/.test(ops[0] ?? ''));
  });
};

const mkfs: Predicate = (cmds) => cmds.some((c) => c.prog.startsWith('mkfs') || ['mke2fs', 'mkswap', 'wipefs', 'fdisk', 'sfdisk', 'parted', 'sgdisk'].includes(c.prog));

const blockDeviceWrite: Predicate = (cmds, command) =>
  cmds.some((c) => c.prog === 'dd' && c.args.some((a) => a.startsWith('of=') && BLOCK_DEVICE.test(a.slice(3))))
  || bashWriteTargets(command).paths.some((p) => BLOCK_DEVICE.test(p));

const shutdown: Predicate = (cmds) => cmds.some((c) => ['shutdown', 'reboot', 'halt', 'poweroff'].includes(c.prog)
  || (c.prog === 'systemctl' && operandsOf(c.args).some((o) => ['reboot', 'poweroff', 'halt', 'kexec', 'suspend', 'hibernate'].includes(o)))
  || ((c.prog === 'init' || c.prog === 'telinit') && operandsOf(c.args).some((o) => o === '0' || o === '6')));

/** The built-in dangers a policy rule can name with `match`. */
export const DANGERS = {
  'rm-root-or-home': rmRootOrHome,
  privilege,
  'force-push': forcePush,
  'git-push': gitPush,
  'download-to-shell': downloadToShell,
  mkfs,
  'block-device-write': blockDeviceWrite,
  shutdown,
} as const satisfies Record<string, Predicate>;

export type DangerName = keyof typeof DANGERS;
export const DANGER_NAMES = Object.keys(DANGERS) as DangerName[];

/** Whether `command` is the named danger, whatever its spelling. */
export function isDanger(name: DangerName, command: string, cmds: Cmd[] = commandsOf(command)): boolean {
  return DANGERS[name](cmds, command);
}
