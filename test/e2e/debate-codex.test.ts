// End-to-end: a Claude vs Codex debate. Side A is a real claude child on the fake Anthropic
// API, side B a real codex child on the fake Responses API answering with its --output-schema
// JSON; two rounds to consensus, each side's round-2 prompt carrying the other's round-1 answer.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { codexHubs } from '../helpers/codexHub.js';
import { FAKE_MODEL } from '../helpers/codex.js';
import { debateSettled } from '../helpers/debate.js';
import type { Step, StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import type { CodexScript } from '../../src/fakemodel/fakeOpenAI.js';
import { job as jobRow } from '../helpers/state.js';

const { codexHub } = codexHubs();
const roundOf = (prompt: string): number => Number(/— side [AB], round (\d+)/.exec(prompt)?.[1] ?? 0);

const claudeSide = (ctx: StepContext): Step => {
  const r = roundOf(ctx.prompt);
  return { tools: [{ name: 'StructuredOutput', input: { position: `CLAUDE-R${r}: cache in memory`, reasoning: 'fast', ...(r > 1 ? { verdict: 'agree' } : {}) } }] };
};

const codexSide: CodexScript = (ctx) => {
  const r = roundOf(ctx.prompt);
  return { text: JSON.stringify({ position: `CODEX-R${r}: cache in memory with a bound`, reasoning: 'bounded', open_points: null, ...(r > 1 ? { verdict: 'agree' } : {}) }) };
};

describe('debates across providers', () => {
  test('claude vs codex: two rounds to consensus, both answers structured', async () => {
    const { h, openai } = await codexHub({ deb: codexSide }, { scripts: { deb: claudeSide } });
    const s = await h.call('start_debate', { task: '@script:deb How should we cache lookups?', sides: [{ provider: 'claude' }, { provider: 'codex', model: FAKE_MODEL }], max_rounds: 2 });
    const d = await debateSettled(h.hub, s.debate_id, 180_000);
    assert.equal(d.status, 'consensus', d.error ?? '');
    assert.deepEqual(d.rounds.map((r) => r.turns.map((t) => [t.side, t.verdict, t.position?.split(':')[0]])), [
      [['A', null, 'CLAUDE-R1'], ['B', null, 'CODEX-R1']],
      [['A', 'agree', 'CLAUDE-R2'], ['B', 'agree', 'CODEX-R2']],
    ]);
    const b2 = d.rounds[1]!.turns[1]!;
    const job = await jobRow(h.hub, b2.job_id);
    assert.equal(job.provider, 'codex');
    assert.match(job.prompt, /CLAUDE-R1: cache in memory/);
    assert.doesNotMatch(job.prompt, /CLAUDE-R2/);
    const codexRequests = openai.requests.filter((r) => r.script === 'deb');
    assert.ok(codexRequests.length >= 2);
    const schemas = codexRequests.map((r) => Object.keys(r.body.text?.format?.schema?.properties ?? {}).sort().join(','));
    assert.ok(schemas.includes('open_points,position,reasoning'), `round 1 schema: ${schemas.join(' | ')}`);
    assert.ok(schemas.includes('open_points,position,reasoning,verdict'), `round 2 schema: ${schemas.join(' | ')}`);
    const r2 = await h.call('read_note', { key: `debate/${s.debate_id}/round-2` });
    assert.match(r2.value, /## Side B \(codex fake-model\)\nCODEX-R2/);
  });
});
