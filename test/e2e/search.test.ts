// End-to-end (real hub, real claude children on the fake model, the built CLI as a process):
// search_output finds what a child said and what its tool printed, while the child still runs
// (the index is written as the transcript is), with the right job, attempt, kind and tool; an
// agent of another subtree finds nothing and learns nothing; `overseer search` and
// GET /api/search answer the same (issue 11 point 4).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { buildCli, overseer as runCli } from '../helpers/cli.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { waitForJob } from '../helpers/wait.js';
import { job, row } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith } = scriptedHubs();
before(buildCli);

// Words that appear nowhere else: the first only in the child's text, the second only in its
// tool's output (the command computes it: its own input has "gnu", "40", "2", "tapir").
const SAID = 'zanzibarquokka';
const PRINTED = 'gnu42tapir';

/** Asks again every 50 ms until the answer has results (a hard deadline; the indexer's flush has no event). */
async function searchUntilFound(call: () => Promise<any>, what: string, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call();
    if (r.results.length) return r;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} in the index`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function callAs(c: Client, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; text: string }> {
  const r = await c.callTool({ name, arguments: args });
  return { isError: r.isError === true, text: (r.content as { text: string }[]).map((x) => x.text).join('\n') };
}

describe('search_output', () => {
  test('finds the text and the tool output while the child runs; another subtree cannot; the CLI and the API too', { timeout: 300_000 }, async () => {
    const release = gate(240_000);
    const hold = gate(240_000);
    const h = await hubWith({
      talker: async (ctx) => {
        if (ctx.step === 0) return { text: `Looking into the ${SAID} problem now.`, tools: [{ name: 'Bash', input: { command: 'echo gnu$((40+2))tapir' } }] };
        if (ctx.step === 1) { await release.wait; return finishStep('talked'); }
        return { text: 'done' };
      },
      bystander: async (ctx) => {
        if (ctx.step === 0) { await hold.wait; return finishStep('stood by'); }
        return { text: 'done' };
      },
    });
    const talker = (await h.call('spawn_agent', { prompt: '@script:talker', title: 'Talker', labels: ['chatty'] })).job_id as string;
    const bystander = (await h.call('spawn_agent', { prompt: '@script:bystander', title: 'Bystander' })).job_id as string;
    // The child has the Bash result in hand when it asks for step 1 (held there by `release`).
    await h.fake.waitForRequest((r) => r.script === 'talker' && r.step === 1 && JSON.stringify(r.body).includes(PRINTED), 120_000);
    await h.fake.waitForRequest((r) => r.script === 'bystander', 120_000);

    // While it runs: both phrases are found (the indexer writes every ≤100 ms; no event marks that).
    const said = await searchUntilFound(() => h.call('search_output', { query: SAID }), 'the text');
    assert.equal((await job(h.hub, talker)).status, 'running', 'found before the job ended');
    assert.equal(said.results.length, 1);
    const t = said.results[0];
    assert.deepEqual([t.job_id, t.title, t.attempt, t.kind, t.tool], [talker, 'Talker', 1, 'text', undefined]);
    assert.match(t.snippet, new RegExp(`«${SAID}»`));
    assert.ok(Math.abs(Date.parse(t.at) - Date.now()) < 120_000, t.at);
    const printed = await searchUntilFound(() => h.call('search_output', { query: PRINTED }), 'the tool output');
    assert.equal(printed.results.length, 1, 'only the result has the computed word, not the call');
    assert.deepEqual([printed.results[0].job_id, printed.results[0].attempt, printed.results[0].kind, printed.results[0].tool], [talker, 1, 'tool_result', 'Bash']);
    const call = await h.call('search_output', { query: 'gnu tapir', job_id: talker });
    assert.deepEqual(call.results.map((r: { kind: string; tool: string }) => `${r.kind} ${r.tool}`), ['tool_call Bash']);
    assert.equal((await h.call('search_output', { query: SAID, label: 'chatty', since: '1h' })).results.length, 1);
    assert.equal((await h.call('search_output', { query: SAID, job_id: bystander })).results.length, 0);

    // The talker itself finds its own words; the bystander (another subtree) finds nothing, and
    // naming the talker's job tells it nothing about it.
    const own = await h.connect({ role: 'agent', jobId: talker });
    const mine = await callAs(own, 'search_output', { query: SAID });
    assert.equal(mine.isError, false, mine.text);
    assert.equal(JSON.parse(mine.text).results.length, 1);
    const other = await h.connect({ role: 'agent', jobId: bystander });
    for (const query of [SAID, PRINTED, 'Talker', talker]) {
      const r = await callAs(other, 'search_output', { query });
      assert.equal(r.isError, false, r.text);
      assert.deepEqual(JSON.parse(r.text).results, [], query);
      assert.equal(JSON.parse(r.text).total_hint, 0);
    }
    const named = await callAs(other, 'search_output', { query: SAID, job_id: talker });
    assert.equal(named.isError, true);
    assert.match(named.text, /not in your subtree/);
    assert.ok(!named.text.includes(SAID) && !named.text.includes('Talker'), named.text);
    const bad = await callAs(other, 'search_output', { query: '"unclosed phrase' });
    assert.equal(bad.isError, true);
    assert.match(bad.text, /^invalid_input: .*unmatched double quote/);
    const lead = await h.callRaw('search_output', { query: 'NEAR(x y) AND col:v' });
    assert.ok(!lead.isError, lead.text);

    // The CLI, read-only against the state database of the running hub.
    const env = { OVERSEER_HOME: h.home };
    const cli = await runCli(h.project, ['search', SAID], env);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, new RegExp(`${talker} #1  Talker  \\[text\\]\\n    .*«${SAID}»`));
    assert.match(cli.stdout, /1 of 1 matches, newest first/);
    const json = await runCli(h.project, ['search', PRINTED, '--job', talker.slice(0, 6), '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout).results.map((r: { kind: string; tool: string }) => [r.kind, r.tool]), [['tool_result', 'Bash']]);
    const without = await runCli(h.project, ['search', SAID, '-quokka'], env);
    assert.equal(without.code, 0, without.stderr);
    assert.match(without.stdout, new RegExp(`${talker} #1`), 'the -word of a different word excludes nothing here');
    const excluded = await runCli(h.project, ['search', SAID, `-${SAID}`], env);
    assert.equal(excluded.code, 0, excluded.stderr);
    assert.equal(excluded.stdout, 'No matches.\n');
    const badCli = await runCli(h.project, ['search', '"unclosed'], env);
    assert.equal(badCli.code, 2);
    assert.match(badCli.stderr, /unmatched double quote/);
    const typo = await runCli(h.project, ['search', SAID, '--jobb', 'x'], env);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /unknown option "--jobb"/);

    // The dashboard's route, with the lead token.
    const base = new URL(h.hub.http!.url).origin;
    const token = readFileSync(join(h.home, 'lead.token'), 'utf8').trim();
    const res = await fetch(`${base}/api/search?q=${SAID}&job=${talker}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { results: unknown[] }).results.length, 1);
    const badRes = await fetch(`${base}/api/search?q=%22open`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(badRes.status, 400);
    assert.match(((await badRes.json()) as { error: { message: string } }).error.message, /unmatched double quote/);

    // Ended: the rest is written and the transcript marked complete.
    release.open();
    hold.open();
    await waitForJob(h.hub, talker, (j) => j.status === 'succeeded', 120_000);
    assert.equal(Number((await row(h.hub, sql<{ done: number | boolean }>`SELECT done FROM transcript_index_state WHERE job_id = ${talker} AND attempt = 1`))?.done), 1);
    const finished = await h.call('search_output', { query: 'mcp overseer finish talked', job_id: talker });
    assert.equal(finished.results[0].kind, 'tool_call');
    assert.equal(finished.results[0].tool, 'mcp__overseer__finish');
  });
});
