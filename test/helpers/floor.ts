// Fixture Floors for the watch's unit tests: a job, a request, a whole floor, each with
// defaults that a test overrides field by field.
import type { Floor, FloorJob, NeedsYouItem } from '../../src/floor/types.js';

export const NOW = 1_760_000_000_000;

export function job(o: Partial<FloorJob> & { job_id: string }): FloorJob {
  return {
    title: `Job ${o.job_id}`, status: 'running', parent_id: null, depth: 1, provider: 'claude', model: 'sonnet', labels: [],
    created_at: NOW - 120_000, started_at: NOW - 90_000, ended_at: null, elapsed_ms: 90_000, turns: 3, max_turns: null,
    cost_usd: 0.0123, cost_unknown: false, budget_usd: null, input_tokens: 1200, output_tokens: 300, progress: null,
    last_line: null, last_event_at: NOW - 1000, lock_waits: [], warnings: [], why_waiting: null, result_line: null,
    failure_class: null, branch: null, diff_stat: null, pr_url: null, workflow_id: null, children: [],
    ...o,
  };
}

export function request(o: Partial<NeedsYouItem> & { request_id: string; job_id: string }): NeedsYouItem {
  return {
    kind: 'approval', key: `req:${o.request_id}`, title: `Job ${o.job_id}`, text: 'may I?', at: NOW - 5000,
    command: `overseer respond ${o.request_id} --approve`, ...o,
  };
}

export function floor(o: Partial<Floor> = {}): Floor {
  return {
    at: NOW, source: 'hub',
    hub: { url: 'http://127.0.0.1:4000/mcp', pid: 4242, started_at: NOW - 600_000, uptime_ms: 600_000, version: '0.1.0' },
    totals: { running: 0, queued: 0, done: 0, failed: 0, needs_you: 0, cost_usd: 0, cost_unknown: false, cap: 8 },
    needs_you: [], running: [], queued: [], done: [], workflows: [], locks: [],
    ...o,
  };
}
