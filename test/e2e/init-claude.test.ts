// End-to-end: what `overseer init` writes works in a real `claude -p` session (fake model). With
// `overseer` on PATH (a shim to this build) init's .mcp.json runs `overseer mcp`; claude, given
// that very file, connects the server, and the permission rule init put in the shared
// .claude/settings.json lets the model call an Overseer tool without a prompt. Control: the same
// session with the rule removed is denied, so the rule is what allows it. (Claude Code applies
// project settings in trusted workspaces only: the test marks the repo trusted, as the
// interactive trust dialog would.)
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeAnthropic, type FakeAnthropic } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeEnv, makeTempDir, runClaude } from '../helpers/claude.js';
import { buildCli, MAIN, overseer } from '../helpers/cli.js';
import { initRepo } from '../helpers/git.js';

describe('init output in a real claude session', { timeout: 240_000 }, () => {
  let tmp = '';
  let fake: FakeAnthropic;
  let pathWithShim = '';

  before(async () => {
    buildCli();
    tmp = await makeTempDir('ovs-initc');
    const bin = join(tmp, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'overseer'), `#!/bin/sh\nexec '${process.execPath}' '${MAIN}' "$@"\n`);
    chmodSync(join(bin, 'overseer'), 0o755);
    pathWithShim = `${bin}:${process.env.PATH}`;
    fake = await startFakeAnthropic({
      scripts: {
        lister: (ctx) => (ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__list_agents', input: {} }] } : { text: `tool said: ${ctx.lastToolResults[0]?.text.slice(0, 200)}` }),
      },
    });
  });

  after(async () => {
    await fake?.close();
    // The MCP servers claude started are killed with its group when it exits; one may still be ending and
    // write its last log line while the directory goes (ENOTEMPTY, seen once in CI): rm tries again.
    if (tmp) await rm(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  async function session(repo: string, name: string) {
    // Claude Code applies a project's settings only in a workspace the person trusted (the
    // interactive trust dialog; -p skips it, so the test records the answer in ~/.claude.json).
    const home = join(tmp, `home-${name}`);
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects: { [repo]: { hasTrustDialogAccepted: true } } }));
    const env = { ...claudeEnv({ home: join(tmp, `home-${name}`), baseUrl: fake.url }), PATH: pathWithShim, OVERSEER_HOME: join(tmp, `state-${name}`) };
    const r = await runClaude(['-p', '@script:lister list them', '--output-format', 'stream-json', '--verbose', '--mcp-config', join(repo, '.mcp.json'), '--strict-mcp-config'], { cwd: repo, env, timeoutMs: 90_000 });
    const init = r.events.find((e) => e.type === 'system' && e.subtype === 'init');
    const result = r.events.find((e) => e.type === 'result');
    const toolResult = r.events.find((e) => e.type === 'user' && Array.isArray(e.message?.content) && e.message.content.some((b: any) => b.type === 'tool_result'));
    return { init, result, block: toolResult?.message.content.find((b: any) => b.type === 'tool_result'), stderr: r.stderr };
  }

  test('the server entry connects and mcp__overseer__* needs no prompt; without the rule the call is denied', async () => {
    const repo = await initRepo(join(tmp, 'repo'));
    const run = await overseer(repo, ['init'], { PATH: pathWithShim });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')).mcpServers.overseer, { type: 'stdio', command: 'overseer', args: ['mcp'] });

    const ok = await session(repo, 'allowed');
    assert.deepEqual(ok.init?.mcp_servers, [{ name: 'overseer', status: 'connected', source: 'dynamic' }], ok.stderr);
    assert.deepEqual(ok.result?.permission_denials, []);
    assert.notEqual(ok.block?.is_error, true, JSON.stringify(ok.block));
    assert.match(JSON.stringify(ok.block?.content), /agents/);

    // Control: drop the rule init added; the same call is now refused.
    writeFileSync(join(repo, '.claude', 'settings.json'), '{}\n');
    const denied = await session(repo, 'denied');
    assert.deepEqual(denied.init?.mcp_servers, [{ name: 'overseer', status: 'connected', source: 'dynamic' }]);
    assert.equal(denied.result?.permission_denials?.[0]?.tool_name, 'mcp__overseer__list_agents');
    assert.equal(denied.block?.is_error, true);
  });
});
