// End-to-end (a real hub, real claude children on the fake model): projects (docs/projects.md)
// and the usage report (docs/usage.md). A sub-agent spawned by an agent of project alpha is in
// alpha, and the agent cannot put one in beta; list_agents and `overseer status` filter by
// project; a broadcast to alpha reaches its two running agents (message rows delivered, and the
// fake model sees the text in each one's next request) and not beta's agent; usage by project
// and by template equals the recorded costs; an archived project is hidden unless named and
// refuses new agents and workflows; `overseer usage|projects|msg '*'` do the same from the CLI.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { initRepo } from '../helpers/git.js';
import { eventually } from '../helpers/wait.js';
import { runOverseer } from '../helpers/overseerCli.js';
import type { StepContext, ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';
import { job, jobs, row, rows } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith, cleanups } = scriptedHubs();

const status = (message: string) => ({ tools: [{ name: 'mcp__overseer__report_status', input: { message } }] });
const heard = (ctx: StepContext): string => {
  const words = ['ALPHA-BROADCAST', 'BETA-NOTE'].filter((w) => ctx.userTexts.some((t) => t.includes(w)));
  return words.length ? `heard ${words.join(' and ')}` : 'heard nothing';
};

describe('projects', () => {
  test('inheritance, filters, a broadcast to one project, usage by project and template, archive', { timeout: 240_000 }, async () => {
    const hold = gate(150_000);
    const waiting = new Set<string>();
    let refusal: ToolResultInfo | undefined;
    const h = await hubWith({
      parent: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__spawn_agent', input: { prompt: '@script:member kid of alpha', title: 'alpha kid' } }] };
        if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__spawn_agent', input: { prompt: '@script:member escapee', title: 'escapee', project: 'beta' } }] };
        if (ctx.step === 2) {
          refusal = ctx.lastToolResults[0];
          waiting.add('parent');
          await hold.wait;
          return status('parent going on');
        }
        if (ctx.step === 3) return finishStep(heard(ctx));
        return { text: 'done' };
      },
      member: async (ctx) => {
        if (ctx.step === 0) {
          waiting.add(ctx.prompt.includes('beta') ? 'beta' : 'kid');
          await hold.wait;
          return status('member going on');
        }
        if (ctx.step === 1) return finishStep(heard(ctx));
        return { text: 'done' };
      },
    });
    cleanups.push(async () => hold.open());
    mkdirSync(join(h.home, 'templates'), { recursive: true });
    writeFileSync(join(h.home, 'templates', 'tester.md'), '---\ndescription: tests things\n---\nRun the tests.\n');

    const P = (await h.call('spawn_agent', { prompt: '@script:parent', title: 'alpha parent', project: 'alpha' })).job_id as string;
    const B = (await h.call('spawn_agent', { prompt: '@script:member of beta', title: 'beta member', project: 'beta', template: 'tester' })).job_id as string;
    await eventually('the three agents wait in their turn', () => waiting.size === 3, 90_000);

    // Inheritance: the kid is in alpha; the agent could not put one in beta.
    const kids = await jobs(h.hub, { parentId: P, limit: 100 });
    assert.equal(kids.length, 1, 'only the kid was spawned');
    const K = kids[0]!.id;
    assert.equal(kids[0]!.project, 'alpha');
    assert.equal(refusal?.is_error, true);
    assert.match(refusal!.text, /a sub-agent belongs to its parent's project \("alpha"\) and an agent cannot put it in another one/);
    assert.equal((await h.call('get_agent', { job_id: K })).project, 'alpha');

    // Filters: list_agents and overseer status.
    const ids = async (args: Record<string, unknown>) => ((await h.call('list_agents', args)).agents as { job_id: string }[]).map((a) => a.job_id);
    assert.deepEqual(await ids({ project: 'alpha' }), [P, K]);
    assert.deepEqual(await ids({ project: 'beta' }), [B]);
    const st = await runOverseer(h.home, ['status', '--project', 'alpha']);
    assert.equal(st.code, 0, st.stderr);
    assert.ok(st.stdout.includes(P) && st.stdout.includes(K), st.stdout);
    assert.ok(!st.stdout.includes(B), st.stdout);
    const stJson = await runOverseer(h.home, ['status', '--json', '--project', 'beta']);
    assert.deepEqual((JSON.parse(stJson.stdout) as { job_id: string; project: string }[]).map((j) => [j.job_id, j.project]), [[B, 'beta']]);

    // Broadcast to alpha: its two running agents, not beta's.
    const b = await h.call('message_agent', { to: '*', project: 'alpha', text: 'ALPHA-BROADCAST: wrap up' });
    assert.deepEqual(b.recipients, [P, K]);
    assert.deepEqual(b.delivered, [P, K]);
    const stored = await rows(h.hub, sql<{ to_id: string; from_id: string; delivered_at: number | null }>`SELECT to_id, from_id, delivered_at FROM messages WHERE text LIKE 'ALPHA-BROADCAST%' ORDER BY to_id`);
    assert.deepEqual(stored.map((r) => r.to_id).sort(), [P, K].sort());
    for (const r of stored) { assert.equal(r.from_id, 'lead'); assert.ok(r.delivered_at, 'delivered into the running conversation'); }
    // Bad broadcasts change nothing.
    const both = await h.callRaw('message_agent', { to: '*', job_id: P, text: 'x' });
    assert.equal(both.isError, true);
    assert.match(both.text, /either job_id \(one agent\) or to: "\*" \(a broadcast\), not both/);
    // The CLI: overseer msg '*' --project beta.
    const cli = await runOverseer(h.home, ['msg', '*', '--project', 'beta', 'BETA-NOTE: hello']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(cli.stdout.trim(), `delivered to 1: ${B}`);

    hold.open();
    const w = await h.call('wait_for_agents', { job_ids: [P, K, B], timeout_s: 120 });
    const result = (id: string) => (w.done as { job_id: string; status: string; result: string }[]).find((d) => d.job_id === id)!;
    for (const id of [P, K, B]) assert.equal(result(id).status, 'succeeded', JSON.stringify(result(id)));
    assert.equal(result(P).result, 'heard ALPHA-BROADCAST', 'the fake model saw the broadcast in the parent\'s next request');
    assert.equal(result(K).result, 'heard ALPHA-BROADCAST');
    assert.equal(result(B).result, 'heard BETA-NOTE', 'beta\'s agent never got alpha\'s broadcast');

    // Usage by project and by template: the recorded attempt costs.
    const cost = async (project: string) => {
      const r = (await row(h.hub, sql<{ c: number | string; n: number | string }>`SELECT COALESCE(SUM(a.cost_usd), 0) AS c, COUNT(*) AS n FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE j.project = ${project}`))!;
      return { c: Number(r.c), n: Number(r.n) };
    };
    const alpha = await cost('alpha');
    const beta = await cost('beta');
    assert.ok(alpha.c > 0 && beta.c > 0, `costs were recorded: ${alpha.c}, ${beta.c}`);
    const byProject = await h.call('usage', { by: 'project' });
    const bucket = (bs: { key: string; cost_usd: number; runs: number; jobs: number }[], k: string) => bs.find((x) => x.key === k)!;
    assert.ok(Math.abs(bucket(byProject.buckets, 'alpha').cost_usd - alpha.c) < 1e-6, `${bucket(byProject.buckets, 'alpha').cost_usd} vs ${alpha.c}`);
    assert.equal(bucket(byProject.buckets, 'alpha').jobs, 2);
    assert.equal(bucket(byProject.buckets, 'alpha').runs, alpha.n);
    assert.ok(Math.abs(bucket(byProject.buckets, 'beta').cost_usd - beta.c) < 1e-6);
    const byTemplate = await h.call('usage', { by: 'template' });
    assert.ok(Math.abs(bucket(byTemplate.buckets, 'tester').cost_usd - beta.c) < 1e-6, 'beta\'s one job used the tester template');
    assert.equal(bucket(byTemplate.buckets, '(no template)').jobs, 2);
    const onlyAlpha = await h.call('usage', { project: 'alpha' });
    assert.ok(Math.abs(onlyAlpha.totals.cost_usd - alpha.c) < 1e-6);
    assert.deepEqual(onlyAlpha.by_project.map((x: { key: string }) => x.key), ['alpha']);
    const refused = await h.callRaw('usage', { since: 'last tuesday' });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /since "last tuesday" is not a time/);
    const cliUsage = await runOverseer(h.home, ['usage', '--by', 'project']);
    assert.equal(cliUsage.code, 0, cliUsage.stderr);
    assert.match(cliUsage.stdout, new RegExp(`^alpha\\s+[\\d,]+\\s+[\\d,]+\\s+[\\d,]+\\s+[\\d,]+\\s+\\$${alpha.c.toFixed(4).replace('.', '\\.')}\\s+${alpha.n}\\s+2$`, 'm'));

    // Archive beta: hidden unless named; no new agents or workflows in it.
    const up = await h.call('update_project', { name: 'beta', archived: true, flagged: true, note: 'on hold' });
    assert.equal(up.archived, true);
    assert.deepEqual(await ids({}), [P, K]);
    assert.deepEqual(await ids({ project: 'beta' }), [B]);
    const st2 = await runOverseer(h.home, ['status']);
    assert.ok(!st2.stdout.includes(B) && st2.stdout.includes(P), st2.stdout);
    assert.match(st2.stdout, /1 job\(s\) of archived projects hidden/);
    const jobCount = async (): Promise<number> => Number((await row(h.hub, sql<{ c: number | string }>`SELECT COUNT(*) AS c FROM jobs`))!.c);
    const jobsBefore = await jobCount();
    const no = await h.callRaw('spawn_agent', { prompt: '@script:member late', project: 'beta' });
    assert.equal(no.isError, true);
    assert.match(no.text, /project "beta" is archived .*Nothing was started; unarchive it first/);
    const repo = await initRepo(join(h.dir, 'repo'));
    const noWf = await h.callRaw('start_workflow', { task: 'build it', cwd: repo, worktree: false, project: 'beta' });
    assert.equal(noWf.isError, true);
    assert.match(noWf.text, /project "beta" is archived/);
    assert.equal(await jobCount(), jobsBefore, 'the refusals left no job');
    const listed = (await h.call('list_projects', {})).projects as { name: string; archived: boolean; flagged: boolean; note: string | null; by_status: Record<string, number>; cost_usd: number; last_activity: string }[];
    assert.deepEqual(listed.map((p) => [p.name, p.archived, p.flagged, p.note, p.by_status]), [['alpha', false, false, null, { succeeded: 2 }], ['beta', true, true, 'on hold', { succeeded: 1 }]]);
    assert.ok(Math.abs(listed[0]!.cost_usd - alpha.c) < 1e-6);
    assert.ok(listed[0]!.last_activity);
    const cliProjects = await runOverseer(h.home, ['projects']);
    assert.match(cliProjects.stdout, /^beta\s+archived, flagged\s+1\s+1 succeeded/m);

    // A workflow's phase jobs carry its project.
    const wf = await h.call('start_workflow', { task: 'build it', cwd: repo, worktree: false, project: 'alpha' });
    assert.equal((await job(h.hub, wf.assess_job_id)).project, 'alpha');
    await h.call('cancel_workflow', { workflow_id: wf.workflow_id });
  });
});
