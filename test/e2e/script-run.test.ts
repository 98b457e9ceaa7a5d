// End-to-end (a real hub, real claude children on the fake model): a script run by run_script fans
// out three agents with parallel, pipes their answers into a fourth that must answer with a JSON
// Schema (Claude Code's --json-schema: the fake model calls StructuredOutput), logs, and returns;
// get_run with wait_s answers when it ends. Every agent is a real job with a conversation of its
// own: the fake model saw exactly one conversation per agent.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { scriptedHubs } from '../helpers/scripted.js';
import { finishStep } from '../helpers/holder.js';
import type { Script, Step } from '../../src/fakemodel/fakeAnthropic.js';
import { attempts } from '../helpers/state.js';

const { hubWith } = scriptedHubs();

/** Reports what it reviewed. */
const review: Script = (ctx) => (ctx.lastToolResults.length ? { text: 'done' } : finishStep(`reviewed ${/file (\w+)/.exec(ctx.prompt)?.[1] ?? '?'}`));
/** Answers with the schema's object. */
const judge: Script = (ctx): Step => {
  if (ctx.lastToolResults.length) return { text: 'judged' };
  const seen = (ctx.prompt.match(/reviewed \w+/g) ?? []).length;
  return { tools: [{ name: 'StructuredOutput', input: { ship: seen === 3, seen } }] };
};

describe('scripted runs with real claude children', () => {
  test('parallel reviews piped into a schema judge; one conversation per agent', { timeout: 240_000 }, async () => {
    const h = await hubWith({ review, judge });
    const r = await h.call('run_script', {
      args: ['alpha', 'beta', 'gamma'],
      script: `export const meta = { name: 'review-and-judge', description: 'three reviews, one verdict' }
phase('Review')
const reviews = await parallel(args.map((f) => () => agent('@script:review review file ' + f, { label: f, max_turns: 5 })))
log(reviews.filter(Boolean).length + ' reviews')
phase('Judge')
const verdict = await agent('@script:judge judge these: ' + reviews.join('; '), { schema: { type: 'object', properties: { ship: { type: 'boolean' }, seen: { type: 'number' } }, required: ['ship', 'seen'] } })
return { reviews, verdict }`,
    });
    const v = await h.call('get_run', { run_id: r.run_id, wait_s: 200 }, {});
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result.reviews, ['reviewed alpha', 'reviewed beta', 'reviewed gamma']);
    assert.deepEqual(v.result.verdict, { ship: true, seen: 3 });
    assert.deepEqual(v.calls.map((c: any) => [c.phase, c.status, c.job_status]), [
      ['Review', 'done', 'succeeded'], ['Review', 'done', 'succeeded'], ['Review', 'done', 'succeeded'], ['Judge', 'done', 'succeeded'],
    ]);
    assert.deepEqual(v.log.map((l: any) => l.text), ['Review', '3 reviews', 'Judge']);
    // One conversation per agent: a conversation starts with a step-0 request; three reviews and one judge.
    const starts = h.fake.requests.filter((q) => q.step === 0 && (q.script === 'review' || q.script === 'judge'));
    assert.deepEqual(starts.map((q) => q.script).sort(), ['judge', 'review', 'review', 'review']);
    for (const c of v.calls) assert.equal((await attempts(h.hub, c.job_id)).length, 1, `${c.job_id} ran more than once`);
  });
});
