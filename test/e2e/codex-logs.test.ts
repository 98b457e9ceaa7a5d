// End-to-end: the transcript of a REAL codex child (scripted fake Responses API) is readable —
// read_agent_output (text) and `overseer logs` (the built CLI) render its shell command with
// its output and exit code, its messages and the end of its turn, framed by the hub's verdict.
// Before the Codex renderer both printed nothing for Codex jobs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { codexHubs } from '../helpers/codexHub.js';
import { buildCli, overseer } from '../helpers/cli.js';

const { codexHub } = codexHubs();

describe('codex transcripts', () => {
  test('read_agent_output and overseer logs render a codex job', async () => {
    buildCli();
    const { h } = await codexHub({
      shelly: (ctx) => (ctx.step === 0 ? { text: 'running it', calls: [{ shell: 'printf "SHELL-OUT-42\\n"' }] } : { text: 'finished with the shell' }),
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:shelly', provider: 'codex' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', w.done[0].error);

    const out = (await h.call('read_agent_output', { job_id: id, tail: 200 })).output as string;
    assert.match(out, /^init: codex thread \S+/m);
    assert.match(out, /^exec \(exit 0\) .*SHELL-OUT-42/m);
    assert.match(out, /^SHELL-OUT-42$/m, 'the command output is shown');
    assert.match(out, /^assistant: finished with the shell$/m);
    assert.match(out, /^result: success \(thread tokens: \d+ in, \d+ out\)$/m);

    const r = await overseer(h.project, ['logs', id], { OVERSEER_HOME: h.home });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^── attempt 1 \(initial\) started/);
    assert.match(r.stdout, /^\s+assistant: finished with the shell$/m);
    assert.match(r.stdout.trimEnd().split('\n').at(-1)!, new RegExp(`^overseer: job ${id} succeeded after 1 attempt, ${w.done[0].turns} turns?, cost unknown`));
  });
});
