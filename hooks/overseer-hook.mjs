#!/usr/bin/env node
// Overseer's PreToolUse lock hook, for Claude Code and Codex. Thin on purpose: it runs on
// every edit, so it loads nothing but Node built-ins and asks the hub (POST /hook), which
// decides. It fails CLOSED: if the hub is unreachable or anything goes wrong, the edit is
// denied with a reason the model sees (Codex allows on hook errors, so errors never escape).
//
// Who is asking: a child agent has OVERSEER_URL and OVERSEER_TOKEN in its environment. The
// lead (hook installed by `overseer init`) has neither: the hook finds <state>/hub.json and
// <state>/lead.token from OVERSEER_HOME or by walking up from the project dir (the project's
// state directory under $XDG_STATE_HOME/overseer, or a legacy <dir>/.overseer); with no live
// hub there are no agents and so nothing to check.
import { request } from 'node:http';
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';

const deny = (reason) => {
  process.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } })}\n`);
  process.exit(0);
};

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
}

/** The state directory the hub keeps for the project at `dir` (src/config.ts, projectStateDir). */
function projectStateDir(dir) {
  let real;
  try { real = realpathSync(dir); } catch { return null; }
  const env = process.env;
  const base = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(env.HOME || homedir(), '.local', 'state');
  const name = basename(real).replace(/[^A-Za-z0-9._-]/g, '_') || 'project';
  return join(base, 'overseer', 'projects', `${name}-${createHash('sha256').update(real).digest('hex').slice(0, 8)}`);
}

/** The hub to ask and the token to ask with, or null when no hub runs (lead only). */
function target(input) {
  if (process.env.OVERSEER_URL && process.env.OVERSEER_TOKEN) return { url: process.env.OVERSEER_URL, token: process.env.OVERSEER_TOKEN };
  const candidates = [];
  if (process.env.OVERSEER_HOME) candidates.push(process.env.OVERSEER_HOME);
  else {
    for (let d = process.env.CLAUDE_PROJECT_DIR || input.cwd || process.cwd(); ; d = dirname(d)) {
      const state = projectStateDir(d);
      if (state) candidates.push(state);
      candidates.push(join(d, '.overseer'));
      if (dirname(d) === d) break;
    }
  }
  for (const home of candidates) {
    let info;
    try { info = JSON.parse(readFileSync(join(home, 'hub.json'), 'utf8')); } catch { continue; }
    if (!info.pid || !alive(info.pid) || !info.url) return null;
    return { url: info.url, token: readFileSync(join(home, 'lead.token'), 'utf8').trim() };
  }
  return null;
}

function ask(t, body) {
  const u = new URL('/hook', t.url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname: u.hostname, port: u.port, path: u.pathname, method: 'POST', timeout: 8000,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.token}`, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(new Error(`hub answered ${res.statusCode}: ${text.slice(0, 200)}`));
        try { resolve(JSON.parse(text)); } catch { reject(new Error('hub answered something that is not JSON')); }
      });
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 8 s')));
    req.on('error', reject);
    req.end(body);
  });
}

try {
  const raw = await readStdin();
  const input = JSON.parse(raw);
  const t = target(input);
  if (!t) process.exit(0);
  let verdict;
  try {
    verdict = await ask(t, raw);
  } catch (err) {
    deny(`Overseer's lock hook could not reach the hub at ${t.url} (${err.message}), so edits are blocked to keep file locks safe. Retry in a moment; if the hub is gone, the lead must restart it.`);
  }
  if (verdict && verdict.decision === 'deny') deny(String(verdict.reason || 'denied by Overseer'));
  process.exit(0);
} catch (err) {
  deny(`Overseer's lock hook failed (${err && err.message ? err.message : String(err)}), so this edit is blocked. Retry; if it persists, the hook input was not understood.`);
}
