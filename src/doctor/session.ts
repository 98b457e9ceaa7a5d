// The hub-session part of `overseer doctor`: the configured limits (MCP sessions per token,
// session idle timeout, the background hub's idle exit) and, when a hub answers, how many
// sessions it holds right now (GET /health with the lead token).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { readHubInfo, type HubInfo } from '../hubfiles/hubLock.js';
import type { HealthInfo } from '../http/api.js';
import type { Check, DoctorDeps } from './types.js';

/** GET /health of a hub with the lead token; undefined when it does not answer. */
export async function fetchHubHealth(info: HubInfo, token: string | undefined, timeoutMs: number): Promise<HealthInfo | undefined> {
  try {
    const res = await fetch(new URL('/health', info.url), { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    const h = (await res.json()) as HealthInfo;
    return h.pid === info.pid ? h : undefined;
  } catch {
    return undefined;
  }
}

function leadToken(home: string): string | undefined {
  try {
    return readFileSync(join(home, 'lead.token'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export async function checkSessions(config: Config | undefined, home: string, deps: Pick<DoctorDeps, 'hubHealth' | 'fetchTimeoutMs'>): Promise<Check> {
  const name = 'sessions';
  if (!config) return { name, status: 'warn', detail: 'limits unknown: the configuration is invalid (see config above)', fix: 'fix the configuration first' };
  const idleExit = config.idleExitS === 0 ? 'never' : `after ${config.idleExitS} s`;
  const limits = `at most ${config.maxSessionsPerToken} MCP sessions per token (OVERSEER_MAX_SESSIONS_PER_TOKEN), idle sessions closed after ${config.sessionIdleS} s (OVERSEER_SESSION_IDLE_S), a background hub with no job and no lead exits ${idleExit} (OVERSEER_IDLE_EXIT_S)`;
  const info = readHubInfo(home);
  if (!info?.url) return { name, status: 'ok', detail: `${limits}; no hub running` };
  const h = await (deps.hubHealth ?? fetchHubHealth)(info, leadToken(home), deps.fetchTimeoutMs);
  if (!h) return { name, status: 'ok', detail: `${limits}; the hub in hub.json (pid ${info.pid}) does not answer` };
  if (!h.sessions) return { name, status: 'warn', detail: `${limits}; hub pid ${h.pid} answers but refused the lead token`, fix: `the lead token in ${join(home, 'lead.token')} does not match the running hub's; restart it (overseer stop)` };
  return { name, status: 'ok', detail: `${limits}; hub pid ${h.pid} holds ${h.sessions.total} session${h.sessions.total === 1 ? '' : 's'} (${h.sessions.lead} lead, ${h.sessions.agent} agent)` };
}
