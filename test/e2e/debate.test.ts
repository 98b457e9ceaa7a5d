// End-to-end: debates with real claude children on the fake model. Each side's turn is a job;
// the fake plays both sides from the debate prompt's header (side, round, or post-action turn),
// and records every prompt it received so the test can check what each side was shown.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { initRepo, gitOut } from '../helpers/git.js';
import { eventually } from '../helpers/wait.js';
import { debateSettled } from '../helpers/debate.js';
import { runOverseer } from '../helpers/overseerCli.js';
import { startFakeAnthropic, type Script, type Step, type StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { sql, type RawBuilder } from 'kysely';
import { job, row, rows } from '../helpers/state.js';

const hubs: TestHub[] = [];
const closers: (() => Promise<void>)[] = [];
after(async () => { for (const h of hubs) await h.stop(); for (const c of closers) await c(); });

const structured = (input: Record<string, unknown>): Step => ({ tools: [{ name: 'StructuredOutput', input }] });
const HEADER = /^# Debate (d-\w+) — (?:side ([AB]), round (\d+)|(post-action|review|response) by side ([AB]))/m;

interface Seen { side: string; round: number; kind: string; prompt: string }

/** Both sides of a debate: round 1 opens with a position, later rounds give `verdicts(side, round)`. */
function debaters(verdicts: (side: string, round: number) => string, seen: Seen[]): (ctx: StepContext) => Step {
  return (ctx: StepContext) => {
    const m = HEADER.exec(ctx.prompt);
    if (!m) return { text: 'not a debate prompt' };
    const kind = m[4] ?? 'answer';
    const side = m[2] ?? m[5]!;
    const round = Number(m[3] ?? 0);
    const loop = Number(/^# Debate .*, loop (\d+) of/m.exec(ctx.prompt)?.[1] ?? 1);
    if (ctx.step === 0) seen.push({ side, round, kind, prompt: ctx.prompt });
    const workDir = /working directory is `([^`]+)`/.exec(ctx.prompt)?.[1] ?? '.';
    if (kind === 'answer') {
      return structured({
        position: `POS-${side}-R${round}${loop > 1 ? `-L${loop}` : ''}: store the sessions in sqlite`, reasoning: `REASON-${side}-R${round}`,
        ...(round === 1 && loop === 1 ? { open_points: [`OPEN-${side}`] } : { verdict: verdicts(side, round) }),
      });
    }
    if (kind === 'post-action') {
      if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(workDir, 'agreed.txt'), content: 'sessions in sqlite\n' } }] };
      return { text: 'REPORT: wrote agreed.txt' };
    }
    if (kind === 'review') return structured({ assessment: 'concerns', notes: 'REVIEW: say why sqlite in the file' });
    return { text: 'RESPONSE: the reason is in the debate notes' };
  };
}

async function hubWith(scripts: Record<string, Script>): Promise<{ h: TestHub; repo: string }> {
  const h = await startTestHub({ scripts });
  hubs.push(h);
  const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# repo\n' });
  return { h, repo };
}

const count = async (h: TestHub, q: RawBuilder<{ c: number | string }>): Promise<number> => Number((await row(h.hub, q))!.c);

describe('debates', () => {
  test('two rounds to consensus, then post-action in a worktree, reviewed and answered: rounds, rows and notes stored', async () => {
    const seen: Seen[] = [];
    const { h, repo } = await hubWith({ agree: debaters(() => 'agree', seen) });
    const s = await h.call('start_debate', {
      task: '@script:agree Where should sessions be stored?', cwd: repo, title: 'Session store',
      sides: [{ provider: 'claude' }, { provider: 'claude' }], max_rounds: 3,
      post_action: 'Write the agreed choice to agreed.txt', post_action_side: 0, verify: true, worktree: true,
    });
    assert.equal(s.status, 'running');
    assert.equal(s.job_ids.length, 2);
    const d = await debateSettled(h.hub, s.debate_id);
    assert.equal(d.status, 'consensus', d.error ?? '');
    assert.deepEqual(d.rounds.map((r) => [r.round, r.turns.map((t) => `${t.side}:${t.verdict}`)]), [[1, ['A:null', 'B:null']], [2, ['A:agree', 'B:agree']]]);
    assert.deepEqual(d.post.map((p) => `${p.kind}:${p.side}:${p.status}`), ['post_action:A:done', 'response:A:done', 'review:B:done'].sort((a, b) => a.localeCompare(b)));

    // Round 2's prompts show both sides' round-1 answers, and never the other side's round-2 answer.
    const r2 = seen.filter((x) => x.kind === 'answer' && x.round === 2);
    assert.equal(r2.length, 2);
    for (const x of r2) {
      const otherSide = x.side === 'A' ? 'B' : 'A';
      assert.match(x.prompt, new RegExp(`POS-${otherSide}-R1`), `side ${x.side} sees the other side's round-1 position`);
      assert.match(x.prompt, new RegExp(`REASON-${otherSide}-R1`));
      assert.match(x.prompt, new RegExp(`POS-${x.side}-R1`), 'and its own');
      assert.doesNotMatch(x.prompt, new RegExp(`POS-${otherSide}-R2`), 'but not the other side\'s current answer');
      assert.match(x.prompt, /`verdict`/);
    }
    const r1 = seen.filter((x) => x.kind === 'answer' && x.round === 1);
    assert.equal(r1.length, 2);
    for (const x of r1) assert.doesNotMatch(x.prompt, /POS-|`verdict`/, 'round 1 shows no answers and asks for no verdict');

    // The post-action ran on side A in the worktree; side B reviewed it with the diff; A answered.
    const review = seen.find((x) => x.kind === 'review')!;
    assert.equal(review.side, 'B');
    assert.match(review.prompt, /\+sessions in sqlite/, 'the reviewer got the diff');
    assert.match(review.prompt, /REPORT: wrote agreed\.txt/);
    const response = seen.find((x) => x.kind === 'response')!;
    assert.ok(response, JSON.stringify(seen.map((x) => [x.kind, x.side, x.round, x.prompt.slice(0, 80)])));
    assert.equal(response.side, 'A');
    assert.match(response.prompt, /REVIEW: say why sqlite in the file/);
    assert.equal(await gitOut(repo, ['show', `${d.branch}:agreed.txt`]), 'sessions in sqlite');
    assert.equal((await gitOut(repo, ['worktree', 'list'])).includes(s.debate_id), false, 'worktree removed, branch kept');

    // Rows: one turn per job, with verdicts and positions.
    const turns = await rows(h.hub, sql<any>`SELECT loop, kind, round, side, job_id, status, verdict, position FROM debate_turns WHERE debate_id = ${s.debate_id} ORDER BY kind, round, side`);
    assert.equal(turns.length, 7);
    for (const t of turns) assert.equal((await job(h.hub, t.job_id)).status, 'succeeded');
    assert.deepEqual(turns.filter((t) => t.kind === 'answer').map((t) => [t.round, t.side, t.verdict, t.position.slice(0, 8)]),
      [[1, 0, null, 'POS-A-R1'], [1, 1, null, 'POS-B-R1'], [2, 0, 'agree', 'POS-A-R2'], [2, 1, 'agree', 'POS-B-R2']]);
    assert.equal(turns.find((t) => t.kind === 'review').verdict, 'concerns');
    assert.deepEqual(JSON.parse((await job(h.hub, turns[0].job_id)).labels_json), ['debate', `debate:${s.debate_id}`]);

    // Notes, readable by agents through the note tools.
    const notes = await h.call('list_notes', { prefix: `debate/${s.debate_id}/` });
    assert.deepEqual(notes.notes.map((n: any) => n.key.split('/').pop()).sort(), ['final', 'post-action', 'response', 'review', 'round-1', 'round-2']);
    const round1 = await h.call('read_note', { key: `debate/${s.debate_id}/round-1` });
    assert.match(round1.value, /## Side A \(claude\)\nPOS-A-R1[\s\S]*Open points:\n- OPEN-A[\s\S]*## Side B \(claude\)\nPOS-B-R1/);
    const final = await h.call('read_note', { key: `debate/${s.debate_id}/final` });
    assert.match(final.value, /outcome: consensus\nrounds: 2 of at most 3/);
    assert.match(final.value, /## Final position of side A\nPOS-A-R2[\s\S]*## Final position of side B\nPOS-B-R2/);
    assert.match(final.value, /## Review \(side B\)\nassessment: concerns/);
    const listed = await h.call('list_debates', { status: 'consensus' });
    assert.deepEqual(listed.debates.map((x: any) => x.debate_id), [s.debate_id]);
  });

  test('disagreement at max_rounds 2: partial and disagree never make consensus', async () => {
    const seen: Seen[] = [];
    const { h, repo } = await hubWith({ disagree: debaters((side) => (side === 'A' ? 'partial' : 'disagree'), seen) });
    const s = await h.call('start_debate', { task: '@script:disagree Tabs or spaces?', cwd: repo, sides: [{ provider: 'claude' }, { provider: 'claude', model: 'claude-sonnet-4-5' }], max_rounds: 2, project: 'style' });
    const d = await debateSettled(h.hub, s.debate_id);
    assert.equal(d.project, 'style');
    assert.deepEqual([...new Set((await Promise.all(d.rounds.flatMap((r) => r.turns.map((t) => job(h.hub, t.job_id))))).map((j) => j.project))], ['style'], 'every turn\'s job carries the debate\'s project');
    assert.equal(d.status, 'disagreement', d.error ?? '');
    assert.equal(d.round, 2);
    assert.deepEqual(d.rounds.at(-1)!.turns.map((t) => t.verdict), ['partial', 'disagree']);
    assert.equal(seen.filter((x) => x.kind === 'answer').length, 4, 'no third round');
    assert.equal((await job(h.hub, d.rounds[0]!.turns[1]!.job_id)).model, 'claude-sonnet-4-5', 'side B ran on its model');
    assert.equal(await count(h, sql`SELECT COUNT(*) AS c FROM debate_turns WHERE debate_id = ${s.debate_id}`), 4);
    const final = await h.call('read_note', { key: `debate/${s.debate_id}/final` });
    assert.match(final.value, /outcome: disagreement\nrounds: 2 of at most 2/);

    // The CLI reads it from the state database (the hub still runs; the read is read-only).
    const list = await runOverseer(h.home, ['debates']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`${s.debate_id}  disagreement\\s+claude vs claude:claude-sonnet-4-5\\s+round 2/2`));
    const one = await runOverseer(h.home, ['debate', s.debate_id.slice(2, 6)]);
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, /status: disagreement\n[\s\S]*round 2\n  A \[partial\] POS-A-R2[^\n]*\n  B \[disagree\] POS-B-R2/);
    const json = await runOverseer(h.home, ['debate', s.debate_id, '--json']);
    assert.deepEqual(JSON.parse(json.stdout).rounds.map((r: any) => r.round), [1, 2]);
    const status = await runOverseer(h.home, ['status']);
    assert.match(status.stdout, new RegExp(`debates:\\n  ${s.debate_id}  disagreement  after 2 round\\(s\\)  claude vs claude  \\$`));
    const bad = await runOverseer(h.home, ['debate', 'd-nope']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /No debate "d-nope"\. Recent debates: d-/);
  });

  test('loops: loop 2 starts from loop 1\'s final positions and can agree in its first round', async () => {
    const seen: Seen[] = [];
    const { h, repo } = await hubWith({ loops: debaters(() => 'agree', seen) });
    const s = await h.call('start_debate', { task: '@script:loops Pick a port', cwd: repo, sides: [{ provider: 'claude' }, { provider: 'claude' }], max_rounds: 1, loops: 2 });
    const d = await debateSettled(h.hub, s.debate_id);
    assert.equal(d.status, 'consensus', d.error ?? '');
    assert.deepEqual(d.rounds.map((r) => [r.loop, r.round, r.turns.map((t) => t.verdict)]), [[1, 1, [null, null]], [2, 1, ['agree', 'agree']]]);
    const loop2 = seen.filter((x) => /loop 2 of 2/.test(x.prompt));
    assert.equal(loop2.length, 2);
    for (const x of loop2) {
      const other = x.side === 'A' ? 'B' : 'A';
      assert.match(x.prompt, new RegExp(`## Where the previous loop ended[\\s\\S]*### Your answer \\(side ${x.side}, the end of loop 1\\)\\nPOS-${x.side}-R1:[\\s\\S]*### The other side's answer \\(side ${other}, the end of loop 1\\)\\nPOS-${other}-R1:`));
    }
    const notes = await h.call('list_notes', { prefix: `debate/${s.debate_id}/` });
    assert.deepEqual(notes.notes.map((n: any) => n.key.slice(`debate/${s.debate_id}/`.length)).sort(), ['final', 'loop-2/round-1', 'round-1']);
    assert.match((await h.call('read_note', { key: `debate/${s.debate_id}/final` })).value, /outcome: consensus\nloops: 1: disagreement, 2: consensus/);
  });

  test('a side\'s job that is cancelled fails the debate with the reason and stops the other side; cancel_debate stops one', async () => {
    const { h, repo } = await hubWith({ slow: () => ({ delayMs: 60_000, text: 'never' }) });
    const s = await h.call('start_debate', { task: '@script:slow think', cwd: repo, sides: [{ provider: 'claude' }, { provider: 'claude' }] });
    await eventually('both sides running', async () => (await Promise.all(s.job_ids.map((id: string) => job(h.hub, id)))).every((j) => j.status === 'running'), 60_000);
    await h.call('cancel_agent', { job_id: s.job_ids[1], reason: 'test' });
    const d = await debateSettled(h.hub, s.debate_id);
    assert.equal(d.status, 'failed');
    assert.match(d.error!, /side B's round 1 answer \(job j-\w+\) cancelled/);
    await eventually('side A stopped', async () => (await job(h.hub, s.job_ids[0])).status === 'cancelled', 30_000);
    assert.match((await h.call('read_note', { key: `debate/${s.debate_id}/final` })).value, /outcome: failed — side B/);

    const s2 = await h.call('start_debate', { task: '@script:slow think again', cwd: repo, sides: [{ provider: 'claude' }, { provider: 'claude' }] });
    const c = await h.call('cancel_debate', { debate_id: s2.debate_id });
    assert.equal(c.status, 'cancelled');
    for (const id of s2.job_ids) assert.equal((await job(h.hub, id)).status, 'cancelled');
  });

  test('a side that answers without the structured result fails the debate, saying so', async () => {
    const { h, repo } = await hubWith({ nostruct: (ctx) => (/— side B/.test(ctx.prompt) ? { text: 'I will not fill in a form' } : { tools: [{ name: 'StructuredOutput', input: { position: 'p', reasoning: 'r' } }] }) });
    const s = await h.call('start_debate', { task: '@script:nostruct q', cwd: repo, sides: [{ provider: 'claude' }, { provider: 'claude' }] });
    const d = await debateSettled(h.hub, s.debate_id);
    assert.equal(d.status, 'failed');
    assert.equal(d.error, `side B's round 1 answer (job ${s.job_ids[1]}) succeeded but it returned no structured answer (expected {position, reasoning, open_points?})`);
    assert.equal(await count(h, sql`SELECT COUNT(*) AS c FROM debate_turns WHERE debate_id = ${s.debate_id}`), 2, 'no second round');
  });

  test('a debate survives a hub restart: interrupted turns run again and the debate finishes', async () => {
    let hold = true;
    const seen: Seen[] = [];
    const answer = debaters(() => 'agree', seen);
    const fake = await startFakeAnthropic({ scripts: { restart: (ctx) => (hold ? { delayMs: 60_000, text: 'held' } : answer(ctx)) } });
    closers.push(() => fake.close());
    const h1 = await startTestHub({ fake });
    const s = await h1.call('start_debate', { task: '@script:restart pick one', sides: [{ provider: 'claude' }, { provider: 'claude' }], max_rounds: 1 });
    await eventually('both sides running', async () => (await Promise.all(s.job_ids.map((id: string) => job(h1.hub, id)))).every((j) => j.status === 'running'), 60_000);
    await h1.stop({ keep: true });
    hold = false;
    const h2 = await startTestHub({ fake, dir: h1.dir });
    hubs.push(h2);
    const d = await debateSettled(h2.hub, s.debate_id);
    assert.equal(d.status, 'disagreement', d.error ?? '');
    const now = d.rounds[0]!.turns.map((t) => t.job_id);
    for (const id of s.job_ids) assert.equal((await job(h2.hub, id)).status, 'interrupted');
    assert.equal(now.filter((id) => s.job_ids.includes(id)).length, 0, 'each turn got a new job');
    assert.deepEqual(d.rounds[0]!.turns.map((t) => t.position?.slice(0, 8)), ['POS-A-R1', 'POS-B-R1']);
  });

  test('bad input is refused before anything is created', async () => {
    const { h, repo } = await hubWith({});
    const two = [{ provider: 'claude' }, { provider: 'claude' }];
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ task: 'x', sides: [{ provider: 'claude' }] }, /exactly two sides/],
      [{ task: 'x', sides: [...two, { provider: 'claude' }] }, /exactly two sides/],
      [{ task: 'x', sides: two, max_rounds: 0 }, /max_rounds must be between 1 and 10/],
      [{ task: 'x', sides: two, max_rounds: 11 }, /max_rounds must be between 1 and 10/],
      [{ task: 'x', sides: [{ provider: 'gemini' }, { provider: 'claude' }] }, /provider must be "claude" or "codex"/],
      [{ task: 'x', sides: two, post_action_side: 1 }, /post_action_side needs post_action/],
      [{ task: 'x', sides: two, verify: true }, /verify needs post_action/],
      [{ task: 'x', sides: two, loops: 6 }, /loops must be between 1 and 5/],
      [{ task: '  ', sides: two }, /task is empty/],
      [{ task: 'x', sides: two, cwd: join(repo, 'nope') }, /does not exist/],
      [{ task: 'x', sides: two, cwd: h.dir, worktree: true }, /not inside a git repository/],
    ];
    for (const [args, re] of cases) {
      const r = await h.callRaw('start_debate', args);
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.match(r.text, re, JSON.stringify(args));
    }
    assert.equal(await count(h, sql`SELECT COUNT(*) AS c FROM debates`), 0);
    assert.equal(await count(h, sql`SELECT COUNT(*) AS c FROM jobs`), 0);
    const missing = await h.callRaw('get_debate', { debate_id: 'd-nope' });
    assert.match(missing.text, /No debate "d-nope"/);
  });
});
