// The real exec and fetch behind the doctor's checks, and small text helpers they share.
import { spawn } from 'node:child_process';
import type { ExecFn, ExecResult, FetchFn } from './types.js';

const MAX_OUTPUT = 64 * 1024;

/** Run a command with stdin ignored, collect (bounded) output, kill it (SIGKILL) at the time limit. */
export const execCommand: ExecFn = (bin, args, opts) =>
  new Promise<ExecResult>((resolve) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const done = (r: ExecResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    let child: ReturnType<typeof spawn>;
    try {
      // Own process group, so a wrapper script and what it starts die together at the limit.
      child = spawn(bin, [...args], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32', windowsHide: true });
    } catch (err) {
      resolve({ kind: 'spawn_error', code: (err as { code?: string }).code, message: (err as Error).message });
      return;
    }
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      child.stdout?.destroy();
      child.stderr?.destroy();
      done({ kind: 'timeout', stdout, stderr });
    }, opts.timeoutMs);
    child.stdout?.setEncoding('utf8').on('data', (d: string) => { if (stdout.length < MAX_OUTPUT) stdout += d; });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => { if (stderr.length < MAX_OUTPUT) stderr += d; });
    child.on('error', (err: NodeJS.ErrnoException) => done({ kind: 'spawn_error', code: err.code, message: err.message }));
    child.on('close', (code, signal) => done({ kind: 'exited', code, signal, stdout, stderr }));
  });

/** The global fetch (Node ≥ 18). */
export const httpFetch: FetchFn = (url, init) => fetch(url, init);

/** First non-empty line of `s`, trimmed and capped. */
export function firstLine(s: string, max = 200): string {
  const line = s.split(/\r?\n/).map((l) => l.trim()).find((l) => l.length > 0) ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A URL fit to print: user:password and key-like query values replaced by ***, else as given. */
export function safeUrl(raw: string): string {
  try {
    const u = new URL(raw);
    let changed = false;
    if (u.username) { u.username = '***'; changed = true; }
    if (u.password) { u.password = '***'; changed = true; }
    for (const k of [...u.searchParams.keys()]) {
      if (/key|token|secret|sig|auth|pass/i.test(k)) { u.searchParams.set(k, '***'); changed = true; }
    }
    return changed ? u.toString() : raw;
  } catch {
    return '(not a valid URL)';
  }
}

/** Why a fetch failed, in plain words (no stack, no secret). */
export function describeFetchError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string; hostname?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${formatSeconds(timeoutMs)}`;
  const code = e?.cause?.code;
  switch (code) {
    case 'ECONNREFUSED': return 'connection refused';
    case 'ENOTFOUND': return `cannot resolve the host name${e.cause?.hostname ? ` ${e.cause.hostname}` : ''}`;
    case 'EAI_AGAIN': return 'DNS lookup failed (no network or no DNS server?)';
    case 'ECONNRESET': return 'the connection was reset';
    case 'ETIMEDOUT': case 'UND_ERR_CONNECT_TIMEOUT': return 'the connection timed out';
    case 'ENETUNREACH': case 'EHOSTUNREACH': return 'the network is unreachable';
    default:
      if (code && /CERT|SSL|TLS/i.test(code)) return `TLS certificate problem (${code}); if a proxy re-signs traffic, set NODE_EXTRA_CA_CERTS to its CA file`;
      return firstLine(e?.cause?.message ?? e?.message ?? String(err)) || 'request failed';
  }
}

/** 3000 → "3 s", 2500 → "2.5 s", 200 → "200 ms". */
export function formatSeconds(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

/** A size for a person: `512 B`, `3.4 KB`, `12.0 MB`, `1.2 GB` (1024-based). */
export function sizeText(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(1)} ${units[i]}`;
}
