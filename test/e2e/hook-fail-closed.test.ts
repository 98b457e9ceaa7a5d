// End-to-end: the lock check of a Claude child fails closed. Its hook (Claude Code's HTTP hook
// to the hub's /hook) is pointed at a port where nothing listens: the edit must be denied, the
// model must be told why, and the file must not appear.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { NodeLauncher } from '../../src/launch/process.js';
import { cwdOf } from '../helpers/steps.js';
import { deadPort } from '../helpers/net.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop(); });

test('a Claude child whose lock check cannot reach the hub is denied the edit, and told why', async () => {
  const port = await deadPort();
  const real = new NodeLauncher();
  let target = '';
  const h = await startTestHub({
    scripts: {
      edit: (ctx) => {
        target = join(cwdOf(ctx), 'blocked.txt');
        if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: target, content: 'x' } }] };
        return { tools: ctx.step === 1 ? [{ name: 'mcp__overseer__finish', input: { result: ctx.lastToolResults[0]?.text ?? '' } }] : [], text: 'done' };
      },
    },
    // Only the hook's URL is redirected: MCP still reaches the hub.
    processes: { launch: (cmd) => real.launch({ ...cmd, args: cmd.args.map((a) => (a.includes('"hooks"') ? a.replace(/127\.0\.0\.1:\d+\/hook/, `127.0.0.1:${port}/hook`) : a)) }) },
  });
  hubs.push(h);
  const id = (await h.call('spawn_agent', { prompt: '@script:edit' })).job_id;
  const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
  const seen = w.done[0].result as string;
  assert.match(seen, /PreToolUse:Write hook error/);
  assert.match(seen, /onFailure is "block"|ECONNREFUSED/);
  assert.equal(existsSync(target), false, 'the edit did not happen');
});
