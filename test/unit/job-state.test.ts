// The job state machine: status predicates, the full transition table, slugify, titleFromPrompt.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  JOB_STATUSES,
  FAILURE_CLASSES,
  type JobStatus,
  isTerminal,
  isActive,
  isPending,
  isSettled,
  canTransition,
  assertTransition,
  slugify,
  titleFromPrompt,
} from '../../src/domain/job.js';

describe('status predicates', () => {
  const expected: Record<JobStatus, { terminal: boolean; active: boolean; pending: boolean; settled: boolean }> = {
    queued: { terminal: false, active: false, pending: true, settled: false },
    waiting: { terminal: false, active: false, pending: true, settled: false },
    running: { terminal: false, active: true, pending: false, settled: false },
    frozen: { terminal: false, active: true, pending: false, settled: false },
    needs_input: { terminal: false, active: true, pending: false, settled: false },
    succeeded: { terminal: true, active: false, pending: false, settled: true },
    failed: { terminal: true, active: false, pending: false, settled: true },
    cancelled: { terminal: true, active: false, pending: false, settled: true },
    interrupted: { terminal: false, active: false, pending: false, settled: true },
  };

  test('the status list is exactly the nine known statuses', () => {
    assert.deepEqual([...JOB_STATUSES].sort(), Object.keys(expected).sort());
    assert.equal(new Set(JOB_STATUSES).size, JOB_STATUSES.length);
  });

  for (const s of JOB_STATUSES) {
    test(`${s}: terminal/active/pending/settled`, () => {
      const e = expected[s];
      assert.equal(isTerminal(s), e.terminal, 'isTerminal');
      assert.equal(isActive(s), e.active, 'isActive');
      assert.equal(isPending(s), e.pending, 'isPending');
      assert.equal(isSettled(s), e.settled, 'isSettled');
    });
  }

  test('every status is in exactly one of pending / active / terminal / interrupted', () => {
    for (const s of JOB_STATUSES) {
      const buckets = [isPending(s), isActive(s), isTerminal(s), s === 'interrupted'].filter(Boolean).length;
      assert.equal(buckets, 1, s);
    }
  });

  test('failure classes are unique and include the ones the classifier produces', () => {
    assert.equal(new Set(FAILURE_CLASSES).size, FAILURE_CLASSES.length);
    for (const c of ['max_turns', 'budget', 'timeout', 'crashed', 'rate_limited', 'auth', 'api_error', 'cancelled',
      'binary_not_found', 'mcp_unavailable', 'reported_failure', 'interrupted'] as const) {
      assert.ok((FAILURE_CLASSES as readonly string[]).includes(c), c);
    }
  });
});

describe('transitions', () => {
  // The full expected table; any change to src/domain/job.ts TRANSITIONS must be mirrored here.
  const allowed: Record<JobStatus, JobStatus[]> = {
    waiting: ['queued', 'failed', 'cancelled'],
    queued: ['running', 'waiting', 'failed', 'cancelled', 'interrupted'],
    running: ['frozen', 'needs_input', 'succeeded', 'failed', 'cancelled', 'interrupted', 'queued'],
    frozen: ['running', 'succeeded', 'failed', 'cancelled', 'interrupted'],
    needs_input: ['running', 'frozen', 'succeeded', 'failed', 'cancelled', 'interrupted'],
    succeeded: ['queued'],
    failed: ['queued'],
    cancelled: ['queued'],
    interrupted: ['queued', 'cancelled', 'failed'],
  };

  test('canTransition matches the table for all 81 pairs', () => {
    const mismatches: string[] = [];
    for (const from of JOB_STATUSES) {
      for (const to of JOB_STATUSES) {
        const want = allowed[from].includes(to);
        if (canTransition(from, to) !== want) mismatches.push(`${from} → ${to}: expected ${want}`);
      }
    }
    assert.deepEqual(mismatches, []);
  });

  test('no status transitions to itself', () => {
    for (const s of JOB_STATUSES) assert.equal(canTransition(s, s), false, s);
  });

  test('terminal statuses can only be resumed (back to queued)', () => {
    for (const s of JOB_STATUSES.filter(isTerminal)) {
      for (const to of JOB_STATUSES) assert.equal(canTransition(s, to), to === 'queued', `${s} → ${to}`);
    }
  });

  test('a pending job cannot jump straight to succeeded', () => {
    assert.equal(canTransition('queued', 'succeeded'), false);
    assert.equal(canTransition('waiting', 'succeeded'), false);
    assert.equal(canTransition('waiting', 'running'), false);
  });

  test('assertTransition passes legal moves and throws naming the job and both statuses', () => {
    assert.doesNotThrow(() => assertTransition('j-1', 'queued', 'running'));
    assert.throws(
      () => assertTransition('j-abc123', 'succeeded', 'running'),
      (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.match(err.message, /j-abc123/);
        assert.match(err.message, /succeeded/);
        assert.match(err.message, /running/);
        return true;
      },
    );
  });
});

describe('slugify', () => {
  test('lower-cases and joins words with single dashes', () => {
    assert.equal(slugify('Fix the Login Bug'), 'fix-the-login-bug');
    assert.equal(slugify('Add  OAuth2 -- support!!'), 'add-oauth2-support');
  });

  test('trims leading and trailing separators', () => {
    assert.equal(slugify('  --Hello, World!--  '), 'hello-world');
    assert.equal(slugify('/src/domain/job.ts'), 'src-domain-job-ts');
  });

  test('keeps digits', () => {
    assert.equal(slugify('Issue #42: v2 API'), 'issue-42-v2-api');
  });

  test('falls back to "job" when nothing is left', () => {
    assert.equal(slugify(''), 'job');
    assert.equal(slugify('!!! ??? ***'), 'job');
    assert.equal(slugify('日本語のタイトル'), 'job');
  });

  test('caps at 40 characters without a trailing dash', () => {
    const s = slugify('implement the new scheduler with priorities and fifo ordering');
    assert.ok(s.length <= 40, `length ${s.length}`);
    assert.ok(!s.endsWith('-'), s);
    assert.ok(!s.startsWith('-'), s);
    assert.ok('implement-the-new-scheduler-with-priorities-and-fifo-ordering'.startsWith(s), s);
    // A cut right after a word boundary must drop the dash: the 40th char here is a separator.
    const title = `${'a'.repeat(39)} bcd`;
    assert.equal(slugify(title), 'a'.repeat(39));
  });

  test('output only ever contains [a-z0-9-]', () => {
    for (const t of ['Ünïcödé Tïtlé', 'tabs\tand\nnewlines', 'emoji 🚀 launch', 'MiXeD_CaSe_under_scores']) {
      const s = slugify(t);
      assert.match(s, /^[a-z0-9]+(-[a-z0-9]+)*$/, `${t} → ${s}`);
    }
  });
});

describe('titleFromPrompt', () => {
  test('uses the first non-empty line, trimmed', () => {
    assert.equal(titleFromPrompt('\n\n   Fix the flaky test  \nmore detail here'), 'Fix the flaky test');
  });

  test('falls back to "agent" for an empty or blank prompt', () => {
    assert.equal(titleFromPrompt(''), 'agent');
    assert.equal(titleFromPrompt('  \n\t\n   '), 'agent');
  });

  test('keeps a line of exactly 80 characters', () => {
    const line = 'x'.repeat(80);
    assert.equal(titleFromPrompt(line), line);
  });

  test('shortens a longer line to 80 characters ending in ...', () => {
    const line = 'y'.repeat(81);
    const t = titleFromPrompt(`${line}\nsecond`);
    assert.equal(t.length, 80);
    assert.ok(t.endsWith('...'));
    assert.equal(t, `${'y'.repeat(77)}...`);
  });
});
