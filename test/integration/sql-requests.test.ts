// Requests over the Kysely layer (src/store/sql/requests.ts), on SQLite and PostgreSQL: what the
// store decides (docs/store-plan.md §2, "Request answers"). A request is answered once — of two
// answerers at once (two processes, each its own connection) one answers and the other's answer
// is kept as a late answer; the asking job shows needs_input exactly while it has a pending
// request — two requests of one job closed at once by two processes leave it running, and on
// PostgreSQL a close waits for the job's row lock before it recounts (a close that counted
// without it would see the other request still pending, and neither would clear needs_input).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { SqlDb } from '../../src/store/sql/open.js';
import {
  answerRequest, cancelPendingOf, closeRequest, getRequest, insertRequest, lateOf, listRequests, markLateSeen, markLeadSeen, openRequest,
  pendingFor, pendingWithJobs, requestsOfJob, requestsWithLate, unseenLate, type NewRequest,
} from '../../src/store/sql/requests.js';
import { markRunsTold, untoldEndedRuns, untoldWaitingApproves } from '../../src/store/sql/runAttention.js';
import { dialectSuite, rowLockWaiters } from '../helpers/sqlDialect.js';


const NOW = 1_764_000_000_000;
let seq = 0;

const req = (id: string, jobId: string, o: Partial<NewRequest> = {}): NewRequest => ({
  id, job_id: jobId, kind: 'approval', summary: `may ${id} go?`, plan_json: null, options_json: null, created_at: NOW + seq++,
  tool_name: null, tool_input_json: null, expires_at: null, who: 'any', ...o,
});

async function addJob(s: SqlDb, id: string, status: string): Promise<void> {
  const n = ++seq;
  await sql`INSERT INTO jobs (id, seq, depth, title, prompt, provider, cwd, status, created_at, updated_at)
    VALUES (${id}, ${n}, 1, ${`job ${id}`}, 'p', 'claude', '/tmp', ${status}, ${NOW}, ${NOW})`.execute(s.db);
}

const jobStatus = async (s: SqlDb, id: string): Promise<string | undefined> =>
  (await s.db.selectFrom('jobs').select('status').where('id', '=', id).executeTakeFirst())?.status;

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`requests on ${dialect}`, () => {
    const layer = dialectSuite(dialect, { prefix: 'overseer-sql-requests-', racers: { n: 2, warm: [{ op: 'call', module: 'requests', fn: 'pendingOf', args: ['nobody'] }] } });
    const { racers } = layer;

    test('open → needs_input; closing one of two keeps it, closing both clears it; a close of a closed request changes nothing', async () => {
      await addJob(layer.s, 'j-one', 'running');
      assert.equal(await openRequest(layer.s.db, req('r-a', 'j-one'), NOW), 'needs_input');
      assert.equal(await openRequest(layer.s.db, req('r-b', 'j-one', { kind: 'question', who: 'person' }), NOW), 'needs_input');
      const a = await closeRequest(layer.s.db, 'r-a', { status: 'answered', decision: 'approved', comment: 'go', by: 'lead' }, NOW + 10);
      assert.deepEqual(a, { closed: true, job_id: 'j-one', job_status: 'needs_input' }, 'r-b still pending');
      assert.deepEqual(await closeRequest(layer.s.db, 'r-b', { status: 'timed_out', comment: 'no answer', by: 'timeout' }, NOW + 20), { closed: true, job_id: 'j-one', job_status: 'running' });
      assert.deepEqual(await closeRequest(layer.s.db, 'r-a', { status: 'cancelled', by: 'agent' }, NOW + 30), { closed: false, job_id: 'j-one', job_status: 'running' });
      assert.equal(await closeRequest(layer.s.db, 'r-none', { status: 'cancelled', by: 'agent' }, NOW), undefined);
      const row = await getRequest(layer.s.db, 'r-a');
      assert.deepEqual([row?.status, row?.decision, row?.comment, row?.answered_by, row?.answered_at], ['answered', 'approved', 'go', 'lead', NOW + 10]);
      assert.deepEqual((await requestsOfJob(layer.s.db, 'j-one', 10)).map((r) => [r.id, r.status, r.who]), [['r-a', 'answered', 'any'], ['r-b', 'timed_out', 'person']]);
      // A job that is not running (frozen, queued) is not made needs_input, nor running by a close.
      await addJob(layer.s, 'j-frozen', 'frozen');
      assert.equal(await openRequest(layer.s.db, req('r-f', 'j-frozen'), NOW), 'frozen');
      assert.equal((await closeRequest(layer.s.db, 'r-f', { status: 'cancelled', by: 'hub' }, NOW))?.job_status, 'frozen');
    });

    test('an answer to a closed request is kept as a late answer; the request is unchanged; the lead is shown it once', async () => {
      await addJob(layer.s, 'j-late', 'running');
      await openRequest(layer.s.db, req('r-l', 'j-late'), NOW);
      assert.equal((await answerRequest(layer.s.db, 'r-l', { decision: 'approved', by: 'person (cli)' }, NOW + 1))?.closed, true);
      const late = await answerRequest(layer.s.db, 'r-l', { decision: 'rejected', comment: 'too slow', by: 'person (form)' }, NOW + 2);
      assert.equal(late?.closed, false);
      assert.equal(typeof late?.late_id, 'number');
      const row = await getRequest(layer.s.db, 'r-l');
      assert.deepEqual([row?.status, row?.decision, row?.answered_by], ['answered', 'approved', 'person (cli)']);
      assert.deepEqual((await lateOf(layer.s.db, 'r-l')).map((l) => [l.id, l.answered_by, l.decision, l.comment, l.at, l.lead_seen_at]), [[late!.late_id, 'person (form)', 'rejected', 'too slow', NOW + 2, null]]);
      assert.deepEqual(await answerRequest(layer.s.db, 'r-none', { by: 'x' }, NOW), undefined, 'no late row for a request that does not exist');
      assert.deepEqual((await unseenLate(layer.s.db, ['j-late'])).map((l) => l.request_id), ['r-l']);
      await markLateSeen(layer.s.db, [late!.late_id!], NOW + 3);
      assert.deepEqual(await unseenLate(layer.s.db, ['j-late']), []);
      assert.equal((await requestsWithLate(layer.s.db, 5))[0], 'r-l');
    });

    test('an ended job\'s pending requests are cancelled, except the hub\'s own; listing, attention reads and lead_seen', async () => {
      await addJob(layer.s, 'j-end', 'running');
      await openRequest(layer.s.db, req('r-e1', 'j-end'), NOW);
      await insertRequest(layer.s.db, req('r-e2', 'j-end', { tool_name: 'overseer:detached' }));
      await openRequest(layer.s.db, req('r-e3', 'j-end', { tool_name: 'Bash' }), NOW);
      assert.deepEqual((await pendingFor(layer.s.db, ['j-end'])).map((r) => r.id), ['r-e1', 'r-e2', 'r-e3']);
      await markLeadSeen(layer.s.db, ['r-e1'], NOW + 5);
      await markLeadSeen(layer.s.db, ['r-e1'], NOW + 9);
      assert.equal((await getRequest(layer.s.db, 'r-e1'))?.lead_seen_at, NOW + 5, 'the first time only');
      await sql`UPDATE jobs SET status = 'failed' WHERE id = 'j-end'`.execute(layer.s.db);
      assert.deepEqual((await pendingWithJobs(layer.s.db)).filter((r) => r.job_id === 'j-end').map((r) => [r.id, r.job_status]), [['r-e1', 'failed'], ['r-e2', 'failed'], ['r-e3', 'failed']]);
      assert.deepEqual((await cancelPendingOf(layer.s.db, 'j-end', NOW + 6, 'overseer:detached')).sort(), ['r-e1', 'r-e3']);
      const e1 = await getRequest(layer.s.db, 'r-e1');
      assert.deepEqual([e1?.status, e1?.answered_by, e1?.comment], ['cancelled', 'hub', 'the agent is no longer running']);
      assert.deepEqual((await pendingFor(layer.s.db, ['j-end'])).map((r) => r.id), ['r-e2']);
      const pending = (await listRequests(layer.s.db, 'pending', 100)).map((r) => r.id);
      assert.ok(pending.includes('r-e2') && !pending.includes('r-e1'));
      const everything = (await listRequests(layer.s.db, 'all', 3)).map((r) => r.created_at);
      assert.deepEqual(everything, [...everything].sort((a, b) => b - a), "'all' is newest first");
    });

    test('the lead\'s run attention: ended script runs and approve() calls waiting for the person, not the hub\'s bundled scripts, each until told', async () => {
      const run = async (id: string, status: string, rules: Record<string, unknown>): Promise<void> =>
        void (await sql`INSERT INTO runs (id, title, content, format, rules_json, status, created_at, updated_at, ended_at, kind)
          VALUES (${id}, ${`title ${id}`}, 'return 1', 'js', ${JSON.stringify(rules)}, ${status}, ${NOW}, ${NOW}, ${status === 'running' ? null : NOW}, 'script')`.execute(layer.s.db));
      await run('run-ok', 'succeeded', { name: null });
      await run('run-wf', 'failed', { bundled: 'implement-review' });
      await run('run-null', 'failed', { bundled: null });
      await run('run-ask', 'running', {});
      await run('run-wf-ask', 'running', { bundled: 'implement-review' });
      for (const [runId, reqId] of [['run-ask', 'r-ask'], ['run-wf-ask', 'r-wf-ask']] as const) {
        await insertRequest(layer.s.db, req(reqId, runId, { tool_name: 'overseer:script', who: 'person' }));
        await sql`INSERT INTO script_calls (run_id, seq, kind, args_json, label, status, request_id, started_at)
          VALUES (${runId}, 1, 'approve', '[]', 'Ship?', 'running', ${reqId}, ${NOW})`.execute(layer.s.db);
      }
      assert.deepEqual((await untoldEndedRuns(layer.s.db)).map((r) => r.id), ['run-null', 'run-ok'].sort());
      assert.deepEqual((await untoldWaitingApproves(layer.s.db)).map((w) => [w.run_id, w.seq, w.request_id, w.label, w.who]), [['run-ask', 1, 'r-ask', 'Ship?', 'person']]);
      await markRunsTold(layer.s.db, ['run-ok', 'run-null'], NOW + 1);
      await markLeadSeen(layer.s.db, ['r-ask'], NOW + 1);
      assert.deepEqual(await untoldEndedRuns(layer.s.db), []);
      assert.deepEqual(await untoldWaitingApproves(layer.s.db), []);
    });

    test('two answerers at once (two processes): one answers, the other\'s answer is a late answer; the job runs again', async () => {
      for (let round = 0; round < 15; round++) {
        const job = `j-two-${round}`;
        const id = `r-two-${round}`;
        await addJob(layer.s, job, 'running');
        await openRequest(layer.s.db, req(id, job), NOW);
        const answers = await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'requests', fn: 'answerRequest', args: [id, { decision: i ? 'rejected' : 'approved', by: `racer ${i}` }, NOW + round] })));
        const outcomes = answers.map((a) => a.value as { closed: boolean; late_id?: number });
        assert.equal(outcomes.filter((o) => o.closed).length, 1, `round ${round}: exactly one answered: ${JSON.stringify(outcomes)}`);
        const winner = outcomes.findIndex((o) => o.closed);
        const row = await getRequest(layer.s.db, id);
        assert.deepEqual([row?.status, row?.answered_by, row?.decision], ['answered', `racer ${winner}`, winner ? 'rejected' : 'approved']);
        const late = await lateOf(layer.s.db, id);
        assert.deepEqual(late.map((l) => [l.id, l.answered_by]), [[outcomes[1 - winner]!.late_id, `racer ${1 - winner}`]], `round ${round}: one late answer, the loser's`);
        assert.equal(await jobStatus(layer.s, job), 'running');
      }
    });

    test('two requests of one job closed at once (two processes): the job leaves needs_input', async () => {
      for (let round = 0; round < 15; round++) {
        const job = `j-pair-${round}`;
        await addJob(layer.s, job, 'running');
        await openRequest(layer.s.db, req(`r-p${round}-0`, job), NOW);
        await openRequest(layer.s.db, req(`r-p${round}-1`, job), NOW);
        assert.equal(await jobStatus(layer.s, job), 'needs_input');
        const answers = await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'requests', fn: 'closeRequest', args: [`r-p${round}-${i}`, { status: 'answered', decision: 'approved', by: `racer ${i}` }, NOW] })));
        assert.deepEqual(answers.map((a) => (a.value as { closed: boolean }).closed), [true, true]);
        assert.equal(await jobStatus(layer.s, job), 'running', `round ${round}: no request of the job is pending`);
      }
    });

    test('a request opened while another of the same job closes (two processes): the job stays needs_input', async () => {
      for (let round = 0; round < 15; round++) {
        const job = `j-swap-${round}`;
        await addJob(layer.s, job, 'running');
        await openRequest(layer.s.db, req(`r-s${round}-old`, job), NOW);
        const [opened, closed] = await Promise.all([
          racers[0]!.send({ op: 'call', module: 'requests', fn: 'openRequest', args: [req(`r-s${round}-new`, job), NOW] }),
          racers[1]!.send({ op: 'call', module: 'requests', fn: 'closeRequest', args: [`r-s${round}-old`, { status: 'answered', decision: 'approved', by: 'lead' }, NOW] }),
        ]);
        assert.equal((closed.value as { closed: boolean }).closed, true);
        assert.ok(opened.value, 'opened');
        assert.equal(await jobStatus(layer.s, job), 'needs_input', `round ${round}: the new request is pending`);
      }
    });

    if (dialect === 'postgres') {
      test('a close takes the job\'s row lock before it recounts: two closes wait for whoever holds the job, then the job runs', async () => {
        await addJob(layer.s, 'j-held', 'running');
        await openRequest(layer.s.db, req('r-h0', 'j-held'), NOW);
        await openRequest(layer.s.db, req('r-h1', 'j-held'), NOW);
        let closing: Promise<Record<string, unknown>[]> | undefined;
        await layer.s.db.transaction().execute(async (trx) => {
          await sql`SELECT id FROM jobs WHERE id = 'j-held' FOR UPDATE`.execute(trx);
          closing = Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'requests', fn: 'closeRequest', args: [`r-h${i}`, { status: 'cancelled', by: `racer ${i}` }, NOW] })));
          closing.catch(() => undefined);
          await rowLockWaiters(layer.s, 2, "the job's row lock");
          assert.equal(await jobStatus(layer.s, 'j-held'), 'needs_input', 'nothing closed while the job is held');
        });
        // Released at commit: the closes go on one after the other (each racer answers within its deadline).
        const answers = await closing!;
        assert.deepEqual(answers.map((a) => (a.value as { closed: boolean }).closed), [true, true]);
        assert.equal(await jobStatus(layer.s, 'j-held'), 'running');
      });
    }
  });
}
