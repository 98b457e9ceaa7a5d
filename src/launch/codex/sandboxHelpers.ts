// Codex's own sandbox on Linux needs its binary reachable on PATH under the name
// `codex-linux-sandbox`. With a system bubblewrap at /usr/bin/bwrap that has no `--argv0`
// (Debian's 0.8.0), Codex runs `bwrap … -- codex-linux-sandbox …`, and bwrap looks that name up on
// PATH inside the sandbox. Codex makes the name itself at start, as symlinks in
// $CODEX_HOME/tmp/…, except when CODEX_HOME is under the temporary directory ($TMPDIR, else /tmp):
// then it warns "Refusing to create helper binaries under temporary dir" and every sandboxed
// command ends `bwrap: execvp codex-linux-sandbox: No such file or directory`. (Without a system
// bwrap Codex uses the bubblewrap built into it, which runs the binary by path: no name needed.)
//
// So the launcher makes the same links itself, in <CODEX_HOME>/bin, and puts that directory first
// on the child's PATH: the commands run wherever the hub's state lives. Why Codex refuses under
// the temporary directory: its sandbox lets commands write there, so a command could replace the
// helper that the next command's sandbox runs. Overseer's jail binds <CODEX_HOME>/bin read-only
// (src/confine/jail.ts), which closes that; docs/security.md says what is left without the jail.
import { closeSync, existsSync, mkdirSync, openSync, readlinkSync, readSync, realpathSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';

/** The names Codex itself links to its binary (its `arg0` dispatch): the sandbox helper and apply_patch. */
export const HELPER_NAMES = ['codex-linux-sandbox', 'apply_patch', 'applypatch'] as const;

/** Where the links go, under the launcher's CODEX_HOME. */
export const helperDir = (codexHome: string): string => join(codexHome, 'bin');

/** The Rust target triple of Codex's npm platform package for this machine (Linux only). */
function linuxTriple(arch: string): string | undefined {
  if (arch === 'x64') return 'x86_64-unknown-linux-musl';
  if (arch === 'arm64') return 'aarch64-unknown-linux-musl';
  return undefined;
}

function isElf(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The native Codex executable behind `bin`: `bin` itself when it is one, else the one the npm
 * package's launcher (`@openai/codex/bin/codex.js`, also reached through node_modules/.bin/codex)
 * runs: `@openai/codex-linux-<arch>/vendor/<triple>/bin/codex`, or the package's own `vendor/`.
 * Undefined for anything else (a wrapper script of the user's): Codex then has to make its own links.
 */
export function nativeCodexBinary(bin: string, arch: string = process.arch): string | undefined {
  let real: string;
  try {
    real = realpathSync(bin);
  } catch {
    return undefined;
  }
  if (isElf(real)) return real;
  const triple = linuxTriple(arch);
  if (!triple || basename(real) !== 'codex.js' || basename(dirname(real)) !== 'bin') return undefined;
  const pkgRoot = dirname(dirname(real));
  const candidates: string[] = [];
  try {
    const platformPkg = createRequire(join(pkgRoot, 'package.json')).resolve(`@openai/codex-linux-${arch}/package.json`);
    candidates.push(join(dirname(platformPkg), 'vendor', triple, 'bin', 'codex'));
  } catch {
    // no platform package next to it: an older layout keeps the binary in the package itself
  }
  candidates.push(join(pkgRoot, 'vendor', triple, 'bin', 'codex'));
  return candidates.find((c) => existsSync(c) && isElf(c));
}

function linkTarget(link: string): string | undefined {
  try {
    return readlinkSync(link);
  } catch {
    return undefined;
  }
}

/**
 * Make `dir`/<name> a symlink to `native` for every helper name (mode 0700 directory). Idempotent;
 * a link pointing elsewhere is replaced atomically (a new link renamed over it), so hubs and
 * launches racing on the same directory never leave a name missing.
 */
export function installHelpers(dir: string, native: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const name of HELPER_NAMES) {
    const link = join(dir, name);
    if (linkTarget(link) === native) continue;
    const tmp = `${link}.${process.pid}.${Date.now()}`;
    try {
      symlinkSync(native, tmp);
      renameSync(tmp, link);
    } finally {
      rmSync(tmp, { force: true });
    }
  }
}
