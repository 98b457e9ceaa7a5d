// Model auto-choice, pure parts (src/models): tier mapping per provider (defaults, configuration
// over them, a provider without tiers), the fallback and candidate models, the configured
// default, the configuration keys, and parsing the classifier's output — good, malformed,
// missing, an error result.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { candidateModels, DEFAULT_TIERS, fallbackModel, requestedModel, tiersFor } from '../../src/models/tiers.js';
import { classifierArgs, CLASSIFIER_SCHEMA, parseClassifierOutput } from '../../src/models/classifier.js';
import { choiceLine } from '../../src/models/choice.js';
import { loadConfigFrom } from '../../src/config.js';
import { InvalidInputError } from '../../src/errors.js';
import { buildFloor } from '../../src/floor/model.js';
import { queuedLines, runningLines } from '../../src/tui/format.js';
import type { JobRow } from '../../src/store/jobs.js';
import { job as floorJob, NOW } from '../helpers/floor.js';

describe('tier mapping', () => {
  test('defaults: claude haiku/sonnet/opus, codex gpt-5-mini/gpt-5', () => {
    assert.deepEqual(tiersFor('claude'), { small: 'claude-haiku-4-5', medium: 'claude-sonnet-4-5', large: 'claude-opus-4-5' });
    assert.equal(tiersFor('codex')?.small, 'gpt-5-mini');
    assert.equal(tiersFor('gemini'), undefined, 'an unknown provider has no tiers');
  });

  test('a configured provider replaces its defaults; null removes its tiers; others keep theirs', () => {
    const cfg = { claude: { small: 's', medium: 'm', large: 'l', fallback: 'f' }, codex: null };
    assert.deepEqual(tiersFor('claude', cfg), cfg.claude);
    assert.equal(tiersFor('codex', cfg), undefined);
    assert.deepEqual(tiersFor('codex', { claude: cfg.claude }), DEFAULT_TIERS.codex);
  });

  test('fallback: the tiers\' fallback, else the configured default model (claude only, not "auto"), else the CLI default', () => {
    const t = { small: 's', medium: 'm', large: 'l' };
    assert.equal(fallbackModel('claude', { ...t, fallback: 'f' }, 'sonnet'), 'f');
    assert.equal(fallbackModel('claude', t, 'sonnet'), 'sonnet');
    assert.equal(fallbackModel('claude', t, 'auto'), null);
    assert.equal(fallbackModel('codex', t, 'sonnet'), null, 'a claude default is no codex model');
    assert.equal(fallbackModel('claude', t, undefined), null);
  });

  test('candidates: every tier model and the fallback, once each', () => {
    assert.deepEqual(candidateModels('claude', { small: 'a', medium: 'b', large: 'b' }, undefined), ['a', 'b', null]);
    assert.deepEqual(candidateModels('claude', { small: 'a', medium: 'b', large: 'c', fallback: 'a' }, undefined), ['a', 'b', 'c']);
  });

  test('the requested model: the spawn\'s own, else the default ("auto" only where tiers exist; a name for claude only)', () => {
    assert.equal(requestedModel('claude', 'opus', 'auto', true), 'opus');
    assert.equal(requestedModel('claude', undefined, 'auto', true), 'auto');
    assert.equal(requestedModel('codex', undefined, 'auto', false), undefined);
    assert.equal(requestedModel('claude', undefined, 'sonnet', true), 'sonnet');
    assert.equal(requestedModel('codex', undefined, 'sonnet', true), undefined);
    assert.equal(requestedModel('claude', undefined, undefined, true), undefined);
  });
});

describe('configuration', () => {
  test('defaults and env strings', () => {
    const c = loadConfigFrom({ home: '/tmp/x' });
    assert.equal(c.classifierModel, 'claude-haiku-4-5');
    assert.equal(c.classifierTimeoutS, 30);
    assert.equal(c.defaultModel, undefined);
    assert.deepEqual(c.modelTiers, {});
    const e = loadConfigFrom({ home: '/tmp/x', defaultModel: 'auto', classifierTimeoutS: '5', modelTiers: '{"codex": null, "claude": {"small": "a", "medium": "b", "large": "c"}}' });
    assert.equal(e.classifierTimeoutS, 5);
    assert.deepEqual(e.modelTiers, { codex: null, claude: { small: 'a', medium: 'b', large: 'c' } });
  });

  test('bad tiers are refused naming the key, the env var and the fix', () => {
    const bad = (v: unknown): string => {
      try {
        loadConfigFrom({ home: '/tmp/x', modelTiers: v });
      } catch (err) {
        assert.ok(err instanceof InvalidInputError);
        return err.message;
      }
      assert.fail('accepted');
    };
    assert.match(bad('{"claude": {"small": "a", "medium": "b"}}'), /modelTiers\.claude\.large \(env OVERSEER_MODEL_TIERS\)/);
    assert.match(bad('{"claude": {"small": "auto", "medium": "b", "large": "c"}}'), /not "auto"/);
    assert.match(bad('{"gemini": null}'), /"claude" or "codex"/);
    assert.match(bad('[1]'), /provider → \{"small","medium","large"/);
  });
});

describe('classifier output', () => {
  const result = (o: Record<string, unknown>): string => JSON.stringify({ type: 'result', subtype: 'success', is_error: false, total_cost_usd: 0.001, ...o });

  test('structured output with a tier and a reason', () => {
    assert.deepEqual(parseClassifierOutput(result({ structured_output: { tier: 'large', reason: 'subtle concurrency bug' } })), { ok: true, tier: 'large', reason: 'subtle concurrency bug' });
  });

  test('JSON inside the result text (fenced) when no structured output came', () => {
    assert.deepEqual(parseClassifierOutput(result({ result: '```json\n{"tier": "small", "reason": "rename"}\n```' })), { ok: true, tier: 'small', reason: 'rename' });
  });

  test('a missing reason is named as such, the tier still counts', () => {
    assert.deepEqual(parseClassifierOutput(result({ structured_output: { tier: 'medium' } })), { ok: true, tier: 'medium', reason: '(no reason given)' });
  });

  test('malformed and missing output fail with why', () => {
    const why = (s: string): string => {
      const a = parseClassifierOutput(s);
      assert.equal(a.ok, false, s);
      return (a as { why: string }).why;
    };
    assert.match(why(''), /printed no result/);
    assert.match(why('not json at all'), /not JSON/);
    assert.match(why('[1,2]'), /not a JSON object/);
    assert.match(why(result({ structured_output: { tier: 'huge', reason: 'x' } })), /no valid tier \(tier "huge"/);
    assert.match(why(result({ structured_output: 'large' })), /not an object/);
    assert.match(why(result({ result: 'I think it is a medium task.' })), /no structured output \(it answered "I think/);
    assert.match(why(result({})), /no structured output/);
    assert.match(why(result({ is_error: true, subtype: 'error_max_turns' })), /ended in an error: error_max_turns/);
    assert.match(why(result({ is_error: true, result: 'API Error: 500' })), /API Error: 500/);
  });

  test('the call: a small model, no tools, no session, the tier schema', () => {
    const args = classifierArgs('claude-haiku-4-5');
    assert.deepEqual(args.slice(args.indexOf('--model'), args.indexOf('--model') + 2), ['--model', 'claude-haiku-4-5']);
    assert.equal(args[args.indexOf('--tools') + 1], '');
    assert.ok(args.includes('--no-session-persistence'));
    assert.deepEqual(JSON.parse(args[args.indexOf('--json-schema') + 1]!), CLASSIFIER_SCHEMA);
  });

  test('the choice as one line', () => {
    assert.equal(choiceLine(JSON.stringify({ tier: 'small', model: 'h', reason: 'easy', fallback: false })), 'auto → small h: easy');
    assert.equal(choiceLine(JSON.stringify({ tier: null, model: null, reason: 'timed out', fallback: true })), 'auto → fallback the CLI default: timed out');
    assert.equal(choiceLine(null), undefined);
  });
});

describe('the floor and the watch show the tier', () => {
  const row = (o: Partial<JobRow>): JobRow => ({
    id: 'j-1', seq: 1, parent_id: null, depth: 1, title: 'T', prompt: 'p', provider: 'claude', model: 'claude-sonnet-4-5', cwd: '/r', work_dir: null, repo_root: null,
    worktree: 0, branch: null, base_commit: null, priority: 0, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, template: null,
    checks_json: '[]', retry: 'none', labels_json: '[]', depends_on_json: '[]', status: 'running', status_message: null, progress: null, result: null,
    outcome: null, error: null, failure_class: null, session_id: null, turns: 0, cost_usd: 0, pid: null, pr_url: null, diff_stat: null, git_note: null,
    token_hash: null, resume_message: null, created_at: NOW - 60_000, started_at: NOW - 30_000, ended_at: null, updated_at: NOW, workflow_id: null, phase: null,
    cycle: null, json_schema: null, structured_json: null, input_tokens: 0, output_tokens: 0, cost_unknown: 0, cache_read_tokens: 0, cache_creation_tokens: 0,
    thread_usage_json: null, lock_violations_json: null, last_event_at: null, last_activity: null, ...o,
  });
  const floorOf = (r: JobRow) => buildFloor({ jobs: [r], requests: [], warnings: [], workflows: [], milestones: [], locks: [], lockWaits: [], deps: [], hub: null, cap: 8, source: 'database' }, NOW);

  test('model_tier: the tier, "fallback", or absent for a job not spawned with auto', () => {
    assert.equal(floorOf(row({ model_choice_json: JSON.stringify({ tier: 'medium', fallback: false }) })).running[0]!.model_tier, 'medium');
    assert.equal(floorOf(row({ model_choice_json: JSON.stringify({ tier: null, fallback: true }) })).running[0]!.model_tier, 'fallback');
    assert.equal('model_tier' in floorOf(row({})).running[0]!, false);
  });

  test('the watch prints provider/model (auto: tier)', () => {
    const j = floorJob({ job_id: 'j-1', model: 'claude-sonnet-4-5', model_tier: 'medium' });
    assert.match(runningLines(j, NOW, 80).detail ?? '', /claude\/claude-sonnet-4-5 \(auto: medium\)/);
    assert.match(queuedLines({ ...j, status: 'queued', model: 'auto', model_tier: undefined }, 120).main, /claude\/auto/);
  });
});
