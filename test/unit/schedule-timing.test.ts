// The pure timing of schedules (src/runs/scheduleTiming.ts): checking at / every_s / cron /
// max_runs / until against each other and the clock, and the next run of a series.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cronProblem, nextCronRun, nextOccurrence, parseZonedTime, planSchedule, MIN_EVERY_S } from '../../src/runs/scheduleTiming.js';
import { InvalidInputError } from '../../src/errors.js';

const T = Date.parse('2030-01-10T08:00:00Z');
const at = (s: string): number => Date.parse(s);
const refuses = (f: () => unknown, re: RegExp): void => assert.throws(f, (e: unknown) => e instanceof InvalidInputError && re.test(e.message));

describe('planSchedule', () => {
  test('no schedule fields: no plan', () => {
    assert.equal(planSchedule({}, T), undefined);
  });

  test('at alone: one run at that time', () => {
    assert.deepEqual(planSchedule({ at: '2030-01-10T09:30:00Z' }, T), { repeat: { kind: 'once' }, firstAt: at('2030-01-10T09:30:00Z'), untilAt: null, maxRuns: null });
    assert.equal(planSchedule({ at: '2030-01-10T10:30:00+01:00' }, T)!.firstAt, at('2030-01-10T09:30:00Z'), 'an offset is honoured');
  });

  test('every_s without at starts now; with at, at that time', () => {
    assert.deepEqual(planSchedule({ every_s: 3600 }, T), { repeat: { kind: 'every', everyS: 3600 }, firstAt: T, untilAt: null, maxRuns: null });
    assert.equal(planSchedule({ every_s: 60, at: '2030-01-10T08:05:00Z', max_runs: 3 }, T)!.firstAt, at('2030-01-10T08:05:00Z'));
  });

  test('cron without at: its next time after now', () => {
    const p = planSchedule({ cron: '30 9 * * *', until: '2030-01-12T00:00:00Z' }, T, 'UTC')!;
    assert.deepEqual(p.repeat, { kind: 'cron', cron: '30 9 * * *' });
    assert.equal(p.firstAt, at('2030-01-10T09:30:00Z'));
    assert.equal(p.untilAt, at('2030-01-12T00:00:00Z'));
  });

  test('bad input: each refusal says what was wrong and how to fix it', () => {
    refuses(() => planSchedule({ at: '2030-01-10T07:59:59Z' }, T), /^at 2030-01-10T07:59:59Z is in the past \(it is 2030-01-10T08:00:00\.000Z now\): pass a future time, or omit at/);
    refuses(() => planSchedule({ at: '2030-01-10T08:00:00Z' }, T), /is in the past/);
    refuses(() => planSchedule({ at: '2030-01-10 09:00' }, T), /not an ISO 8601 time with a zone/);
    refuses(() => planSchedule({ at: '2030-01-10T09:00:00' }, T), /not an ISO 8601 time with a zone/);
    refuses(() => planSchedule({ every_s: 60, cron: '* * * * *' }, T), /^every_s and cron were both given/);
    refuses(() => planSchedule({ at: '2030-01-10T09:00:00Z', max_runs: 2 }, T), /^max_runs caps how often a repeating schedule runs.*add every_s or cron, or omit max_runs/);
    refuses(() => planSchedule({ until: '2030-01-11T00:00:00Z' }, T), /^until ends a repeating schedule/);
    refuses(() => planSchedule({ every_s: MIN_EVERY_S - 1 }, T), /every_s 59 is out of range: a whole number of seconds from 60/);
    refuses(() => planSchedule({ every_s: 60, at: '2030-01-10T09:00:00Z', until: '2030-01-10T09:00:00Z' }, T), /^until 2030-01-10T09:00:00Z is not after the first run \(2030-01-10T09:00:00\.000Z\)/);
    refuses(() => planSchedule({ cron: '0 0 1 * *', until: '2030-01-20T00:00:00Z' }, T, 'UTC'), /is not after the first run \(2030-02-01T00:00:00\.000Z\)/);
    refuses(() => planSchedule({ cron: '0 0 30 2 *' }, T), /^cron "0 0 30 2 \*" never fires: no date matches it/);
    refuses(() => planSchedule({ cron: 'every monday' }, T), /^cron "every monday" is not a 5-field cron expression \(minute hour day-of-month month day-of-week/);
    refuses(() => planSchedule({ cron: '0 0 * * * *' }, T), /is not a 5-field cron expression/);
    refuses(() => planSchedule({ cron: '61 * * * *' }, T), /is not a 5-field cron expression.*minute/);
    refuses(() => planSchedule({ every_s: 60, max_runs: 0 }, T), /max_runs 0 is out of range/);
  });
});

describe('cron helpers', () => {
  test('never-firing and unparsable expressions are named; good ones have a next run', () => {
    assert.match(cronProblem('0 0 31 4 *', T)!, /never fires/);
    assert.match(cronProblem('0 0 30 2 *', T)!, /never fires/);
    assert.match(cronProblem('nope', T)!, /not a 5-field cron expression/);
    assert.equal(cronProblem('0 0 29 2 *', T), undefined, 'leap days fire (rarely)');
    assert.equal(nextCronRun('*/15 * * * *', at('2030-01-10T08:00:00Z'), 'UTC'), at('2030-01-10T08:15:00Z'), 'strictly after');
    assert.equal(nextCronRun('0 0 29 2 *', T, 'UTC'), at('2032-02-29T00:00:00Z'));
    assert.equal(nextCronRun('0 0 30 2 *', T), null);
  });

  test('parseZonedTime wants a zone', () => {
    assert.equal(parseZonedTime('2030-01-10T08:00Z'), T);
    assert.equal(parseZonedTime('2030-01-10T08:00:00.000Z'), T);
    assert.equal(parseZonedTime('2030-01-10T09:00:00+0100'), T);
    assert.equal(parseZonedTime('2030-01-10'), undefined);
    assert.equal(parseZonedTime('tomorrow'), undefined);
  });
});

describe('nextOccurrence', () => {
  const every = planSchedule({ every_s: 60, at: '2030-01-10T08:01:00Z' }, T)!; // grid 08:01, 08:02, ...

  test('every_s: the next time of the grid after now; missed times are skipped, not made up', () => {
    assert.deepEqual(nextOccurrence(every, 1, at('2030-01-10T08:01:05Z')), { at: at('2030-01-10T08:02:00Z') });
    assert.deepEqual(nextOccurrence(every, 1, at('2030-01-10T08:02:00Z')), { at: at('2030-01-10T08:03:00Z') }, 'exactly on a grid time: the following one');
    // A run that took 10 minutes, or a hub that was down for a day: one next run, after now.
    assert.deepEqual(nextOccurrence(every, 1, at('2030-01-10T08:11:30Z')), { at: at('2030-01-10T08:12:00Z') });
    assert.deepEqual(nextOccurrence(every, 1, at('2030-01-11T08:00:30Z')), { at: at('2030-01-11T08:01:00Z') });
  });

  test('cron: its next time after now', () => {
    const p = planSchedule({ cron: '0 9 * * 1-5' }, T, 'UTC')!; // 2030-01-10 is a Thursday
    assert.deepEqual(nextOccurrence(p, 1, at('2030-01-10T09:00:40Z'), 'UTC'), { at: at('2030-01-11T09:00:00Z') });
    assert.deepEqual(nextOccurrence(p, 2, at('2030-01-11T09:10:00Z'), 'UTC'), { at: at('2030-01-14T09:00:00Z') }, 'over the weekend');
  });

  test('caps: max_runs, until, and a one-shot', () => {
    const capped = planSchedule({ every_s: 60, max_runs: 2 }, T)!;
    assert.deepEqual(nextOccurrence(capped, 1, T + 5000), { at: T + 60_000 });
    assert.deepEqual(nextOccurrence(capped, 2, T + 65_000), { end: 'max_runs reached (2 runs)' });
    const until = planSchedule({ every_s: 3600, until: '2030-01-10T10:00:00Z' }, T)!;
    assert.deepEqual(nextOccurrence(until, 2, at('2030-01-10T09:00:10Z')), { at: at('2030-01-10T10:00:00Z') }, 'until is inclusive');
    const over = nextOccurrence(until, 3, at('2030-01-10T10:00:10Z'));
    assert.ok('end' in over && /^until reached \(2030-01-10T10:00:00\.000Z\); the next run would have been 2030-01-10T11:00:00\.000Z/.test(over.end), JSON.stringify(over));
    const once = planSchedule({ at: '2030-01-10T09:00:00Z' }, T)!;
    assert.ok('end' in nextOccurrence(once, 1, at('2030-01-10T09:01:00Z')));
  });
});
