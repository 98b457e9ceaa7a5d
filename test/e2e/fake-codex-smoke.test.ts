// End-to-end smoke test: the REAL codex CLI (devDependency) against the scripted fake Responses API.
// Proves the fake's wire format drives codex's tool loop (shell, apply_patch, MCP over HTTP),
// resume, PreToolUse denial, and pins down failure behaviour (provider down, SIGINT, a required
// MCP server that cannot connect). Facts: docs/codex-notes.md.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import net from 'node:net';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { contextOf, startFakeOpenAI, type FakeOpenAI } from '../../src/fakemodel/fakeOpenAI.js';
import { deadPort } from '../helpers/net.js';
import {
  codexEnv,
  codexHome,
  completedItems,
  execFlags,
  codexTempBase,
  makeTempDir,
  runCodex,
  tomlString,
  type CodexRun,
} from '../helpers/codex.js';

const TIMEOUT_MS = 60_000;

function diag(run: CodexRun): string {
  return `exit ${run.code} signal ${run.signal} in ${run.durationMs} ms\nstderr: ${run.stderr.slice(-3000)}\nstdout: ${run.stdout.slice(-3000)}`;
}

function threadId(run: CodexRun): string {
  const ev = run.events.find((e) => e.type === 'thread.started');
  assert.ok(ev, `no thread.started\n${diag(run)}`);
  return ev.thread_id as string;
}

interface EchoMcp {
  url: string;
  calls: string[];
  unauthorized: number;
  close(): Promise<void>;
}

/** A stateless streamable-HTTP MCP server with one tool `echo`, answering only `Bearer <token>`. */
async function startEchoMcp(token: string): Promise<EchoMcp> {
  const state = { calls: [] as string[], unauthorized: 0 };
  const http: Server = createServer((req, res) => {
    void (async () => {
      if (req.headers.authorization !== `Bearer ${token}`) {
        state.unauthorized++;
        res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'unauthorized' }, id: null }));
        return;
      }
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST' });
        res.end();
        return;
      }
      const server = new McpServer({ name: 'probe', version: '1.0.0' });
      server.registerTool(
        'echo',
        { description: 'Echo the given text back', inputSchema: { text: z.string() } },
        async ({ text }) => {
          state.calls.push(text);
          return { content: [{ type: 'text' as const, text: `echo: ${text}` }] };
        },
      );
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close().catch(() => undefined);
        void server.close().catch(() => undefined);
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));
  const port = (http.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get calls() {
      return state.calls;
    },
    get unauthorized() {
      return state.unauthorized;
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe('real codex against the fake Responses API', { timeout: 10 * TIMEOUT_MS }, () => {
  let fake: FakeOpenAI;
  let home: string;
  let chome: string;
  const dirs: string[] = [];
  const tmp = async (p: string): Promise<string> => {
    const d = await makeTempDir(p, codexTempBase());
    dirs.push(d);
    return d;
  };
  const env = (extra?: Record<string, string>): NodeJS.ProcessEnv => codexEnv({ home, codexHome: chome, ...(extra ? { extra } : {}) });
  const mine = (script: string) => fake.requests.filter((r) => r.script === script);

  before(async () => {
    fake = await startFakeOpenAI();
    home = await tmp('ovs-cx-home');
    chome = await codexHome(await tmp('ovs-cx-codexhome'), fake.url);
  });
  after(async () => {
    await fake.close();
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  test('a shell call writes a file, then the text step ends the turn with usage', async () => {
    const work = await tmp('ovs-cx-work');
    fake.addScript('shell', (ctx) =>
      ctx.step === 0
        ? { text: 'writing', calls: [{ shell: 'echo hello-from-shell > out.txt && cat out.txt' }] }
        : { text: `done: ${ctx.lastOutputs[0]?.text.includes('hello-from-shell') ? 'saw output' : 'no output'}` },
    );

    const run = await runCodex(['exec', ...execFlags(work), '@script:shell write it'], { cwd: work, env: env(), timeoutMs: TIMEOUT_MS });

    assert.equal(run.code, 0, diag(run));
    assert.equal(await readFile(path.join(work, 'out.txt'), 'utf8'), 'hello-from-shell\n');
    const cmd = completedItems(run.events, 'command_execution')[0];
    assert.ok(cmd, diag(run));
    assert.equal(cmd.exit_code, 0);
    assert.equal(cmd.aggregated_output, 'hello-from-shell\n');
    assert.deepEqual(completedItems(run.events, 'agent_message').map((i) => i.text), ['writing', 'done: saw output']);
    const last = run.events.at(-1);
    assert.equal(last.type, 'turn.completed', diag(run));
    // Two requests of 100/10 tokens each (the fake's default usage), summed by codex.
    assert.equal(last.usage.input_tokens, 200);
    assert.equal(last.usage.output_tokens, 20);
    // The catalog written by codexHome() removes the "Model metadata not found" warning.
    assert.equal(completedItems(run.events, 'error').length, 0, diag(run));
    const reqs = mine('shell');
    assert.deepEqual(reqs.map((r) => [r.step, r.outcome]), [[0, 'sent'], [1, 'sent']]);
    const ctx1 = contextOf(reqs[1]!.body, 'shell');
    assert.equal(ctx1.lastOutputs.length, 1);
    assert.equal(ctx1.lastOutputs[0]!.name, 'exec_command');
    assert.equal(ctx1.lastOutputs[0]!.type, 'function_call_output');
    assert.equal(ctx1.cwd, work);
    assert.equal(reqs[0]!.headers.authorization, 'Bearer sk-fake');
  });

  test('an apply_patch call adds a file and yields a file_change item', async () => {
    const work = await tmp('ovs-cx-work');
    fake.addScript('patch', [
      { calls: [{ patch: '*** Begin Patch\n*** Add File: hello.txt\n+hello from patch\n*** End Patch\n' }] },
      { text: 'patched' },
    ]);

    const run = await runCodex(['exec', ...execFlags(work), '@script:patch add it'], { cwd: work, env: env(), timeoutMs: TIMEOUT_MS });

    assert.equal(run.code, 0, diag(run));
    assert.equal(await readFile(path.join(work, 'hello.txt'), 'utf8'), 'hello from patch\n');
    const change = completedItems(run.events, 'file_change')[0];
    assert.ok(change, diag(run));
    assert.equal(change.status, 'completed');
    assert.deepEqual(change.changes, [{ path: path.join(work, 'hello.txt'), kind: 'add' }]);
    const out = contextOf(mine('patch')[1]!.body, 'patch').lastOutputs[0];
    assert.equal(out?.type, 'custom_tool_call_output');
    assert.match(out?.text ?? '', /Success\. Updated the following files:\nA hello\.txt/);
  });

  test('an MCP tool on a bearer-protected HTTP server is called through its namespace', async () => {
    const work = await tmp('ovs-cx-work');
    const mcp = await startEchoMcp('probe-secret');
    try {
      fake.addScript('mcp', (ctx) => {
        if (ctx.step > 0) return { text: `result: ${ctx.lastOutputs.map((o) => o.text).join(' | ')}` };
        if (!ctx.mcpTools.includes('mcp__probe__echo')) return { text: `no echo tool; tools: ${ctx.tools.join(',')}` };
        return { calls: [{ mcp: { server: 'probe', tool: 'echo', args: { text: 'ping' } } }] };
      });

      const run = await runCodex(
        [
          'exec', ...execFlags(work),
          '-c', `mcp_servers.probe.url=${tomlString(mcp.url)}`,
          '-c', 'mcp_servers.probe.bearer_token_env_var="PROBE_TOKEN"',
          '-c', 'mcp_servers.probe.default_tools_approval_mode="approve"',
          '@script:mcp call echo',
        ],
        { cwd: work, env: env({ PROBE_TOKEN: 'probe-secret' }), timeoutMs: TIMEOUT_MS },
      );

      assert.equal(run.code, 0, diag(run));
      const call = completedItems(run.events, 'mcp_tool_call')[0];
      assert.ok(call, diag(run));
      assert.equal(call.status, 'completed', diag(run));
      assert.equal(call.server, 'probe');
      assert.equal(call.tool, 'echo');
      assert.deepEqual(call.arguments, { text: 'ping' });
      assert.deepEqual(call.result.content, [{ type: 'text', text: 'echo: ping' }]);
      assert.deepEqual(mcp.calls, ['ping']);
      assert.equal(mcp.unauthorized, 0);
      const first = mine('mcp')[0]!;
      const ns = first.body.tools.find((t: any) => t.type === 'namespace' && t.name === 'mcp__probe');
      assert.ok(ns, 'the MCP namespace is offered directly (no tool_search)');
      assert.ok(!first.body.tools.some((t: any) => t.type === 'tool_search'));
      const out = contextOf(mine('mcp')[1]!.body, 'mcp').lastOutputs[0];
      assert.equal(out?.namespace, 'mcp__probe');
      assert.equal(out?.name, 'echo');
      assert.match(out?.text ?? '', /echo: ping/);
      assert.match(completedItems(run.events, 'agent_message').at(-1)?.text ?? '', /echo: ping/);
    } finally {
      await mcp.close();
    }
  });

  test('exec resume continues the same thread with the earlier history (exec options before `resume`)', async () => {
    const work = await tmp('ovs-cx-work');
    const work2 = await tmp('ovs-cx-work2');
    fake.addScript('resume', (ctx) => ({ text: `step ${ctx.step} turn ${ctx.turn} prompts ${ctx.userTexts.length}` }));

    const first = await runCodex(['exec', ...execFlags(work), '@script:resume first'], { cwd: work, env: env(), timeoutMs: TIMEOUT_MS });
    assert.equal(first.code, 0, diag(first));
    const tid = threadId(first);

    // -C/-s/-m are exec options: they go before `resume` (after it they are rejected, exit 2).
    const second = await runCodex(
      ['exec', '--json', '--skip-git-repo-check', '-C', work2, '-s', 'workspace-write', '-m', 'fake-model', 'resume', tid, 'next'],
      { cwd: work2, env: env(), timeoutMs: TIMEOUT_MS },
    );
    assert.equal(second.code, 0, diag(second));
    assert.equal(threadId(second), tid);
    assert.equal(completedItems(second.events, 'agent_message')[0]?.text, 'step 1 turn 1 prompts 2');
    const reqs = mine('resume');
    assert.equal(reqs.length, 2);
    const ctx = contextOf(reqs[1]!.body, 'resume');
    assert.equal(ctx.prompt, 'next');
    assert.equal(ctx.userTexts[0], '@script:resume first');
    assert.equal(ctx.cwd, work2, 'the new environment_context carries the new -C');
    assert.equal(reqs[1]!.headers['thread-id'], tid);
    assert.equal(second.events.at(-1).type, 'turn.completed');
    assert.equal(second.events.at(-1).usage.input_tokens, 200, 'usage is cumulative over the thread');

    const bad = await runCodex(['exec', 'resume', '--json', '-C', work, tid, 'x'], { cwd: work, env: env(), timeoutMs: TIMEOUT_MS });
    assert.equal(bad.code, 2, diag(bad));
    assert.match(bad.stderr, /unexpected argument '-C'/);
  });

  test('a long prompt goes through stdin with `-`, for exec and for exec resume', async () => {
    const work = await tmp('ovs-cx-work');
    fake.addScript('stdin', (ctx) => ({ text: `len ${ctx.prompt.length}` }));
    const long = `@script:stdin ${'x'.repeat(300_000)}\n`;

    const first = await runCodex(['exec', ...execFlags(work), '-'], { cwd: work, env: env(), timeoutMs: TIMEOUT_MS, stdin: long });
    assert.equal(first.code, 0, diag(first));
    // 300 kB: more than one argv string may hold on Linux (MAX_ARG_STRLEN = 128 KiB). Sent verbatim, trailing newline included.
    assert.equal(completedItems(first.events, 'agent_message')[0]?.text, `len ${long.length}`);

    const second = await runCodex(['exec', '--json', '--skip-git-repo-check', 'resume', threadId(first), '-'], {
      cwd: work,
      env: env(),
      timeoutMs: TIMEOUT_MS,
      stdin: 'y'.repeat(200_000),
    });
    assert.equal(second.code, 0, diag(second));
    assert.equal(completedItems(second.events, 'agent_message')[0]?.text, 'len 200000');
  });

  test('a PreToolUse hook that denies keeps the patch from applying; the reason comes back as tool output', async () => {
    const work = await tmp('ovs-cx-work');
    const hooks = await tmp('ovs-cx-hooks');
    const hook = path.join(hooks, 'deny.mjs');
    const seen = path.join(hooks, 'input.json');
    await writeFile(
      hook,
      `import { writeFileSync } from 'node:fs';
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  writeFileSync(${JSON.stringify(seen)}, input);
  process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'LOCKED: locked.txt is held by agent-b' } }));
});
`,
    );
    const command = `'${process.execPath}' '${hook}'`;
    fake.addScript('hook', (ctx) =>
      ctx.step === 0
        ? { calls: [{ patch: '*** Begin Patch\n*** Add File: locked.txt\n+nope\n*** End Patch\n' }] }
        : { text: `got: ${ctx.lastOutputs[0]?.text ?? 'nothing'}` },
    );

    const run = await runCodex(
      [
        'exec', ...execFlags(work), '--dangerously-bypass-hook-trust',
        '-c', `hooks.PreToolUse=[{matcher="apply_patch",hooks=[{type="command",command=${tomlString(command)},timeout=10}]}]`,
        '@script:hook write the locked file',
      ],
      { cwd: work, env: env(), timeoutMs: TIMEOUT_MS },
    );

    assert.equal(run.code, 0, diag(run));
    assert.equal(existsSync(path.join(work, 'locked.txt')), false, 'the denied patch must not apply');
    assert.equal(completedItems(run.events, 'file_change').length, 0, diag(run));
    const input = JSON.parse(await readFile(seen, 'utf8'));
    assert.equal(input.hook_event_name, 'PreToolUse');
    assert.equal(input.tool_name, 'apply_patch');
    assert.match(input.tool_input.command, /\*\*\* Add File: locked\.txt/);
    const out = contextOf(mine('hook')[1]!.body, 'hook').lastOutputs[0];
    assert.ok(out, 'the request after the denial carries a tool output');
    assert.match(out.text, /^Command blocked by PreToolUse hook: LOCKED: locked\.txt is held by agent-b/);
    assert.equal(run.events.at(-1).type, 'turn.completed');
  });

  test('provider refusing connections + --disable unbounded_connection_retries: prompt turn.failed', async () => {
    const work = await tmp('ovs-cx-work');
    const deadHome = await codexHome(await tmp('ovs-cx-deadhome'), `http://127.0.0.1:${await deadPort()}/v1`);

    const run = await runCodex(['exec', ...execFlags(work), '--disable', 'unbounded_connection_retries', 'hi'], {
      cwd: work,
      env: codexEnv({ home, codexHome: deadHome }),
      timeoutMs: 30_000,
    });

    assert.ok(run.durationMs < 15_000, diag(run));
    assert.equal(run.code, 1, diag(run));
    const failed = run.events.at(-1);
    assert.equal(failed.type, 'turn.failed', diag(run));
    assert.match(failed.error.message, /Connection failed/);
  });

  test('SIGINT while the model is answering ends codex at once (exit 1, no terminal event); the thread resumes', async () => {
    const work = await tmp('ovs-cx-work');
    fake.addScript('slow', (ctx) => (ctx.turn === 0 ? { text: 'never sent', delayMs: 60_000 } : { text: `resumed after: ${ctx.userTexts.some((t) => t.includes('<turn_aborted>'))}` }));
    let signalledAt = 0;

    const run = await runCodex(['exec', ...execFlags(work), '@script:slow wait'], {
      cwd: work,
      env: env(),
      timeoutMs: TIMEOUT_MS,
      onSpawn: (child) => {
        fake.waitForRequest((r) => r.script === 'slow', TIMEOUT_MS).then(
          () => {
            signalledAt = Date.now();
            child.kill('SIGINT');
          },
          () => undefined,
        );
      },
    });

    const exitMs = Date.now() - signalledAt;
    assert.ok(signalledAt > 0, diag(run));
    assert.ok(exitMs < 5_000, `exited ${exitMs} ms after SIGINT`);
    assert.equal(run.code, 1, diag(run));
    assert.equal(run.signal, null);
    assert.ok(!run.events.some((e) => e.type === 'turn.completed' || e.type === 'turn.failed'), diag(run));
    const req = await fake.waitForRequest((r) => r.script === 'slow' && r.outcome !== undefined, 5_000);
    assert.equal(req.outcome, 'aborted');

    const again = await runCodex(['exec', '--json', '--skip-git-repo-check', 'resume', threadId(run), 'go on'], { cwd: work, env: env(), timeoutMs: TIMEOUT_MS });
    assert.equal(again.code, 0, diag(again));
    assert.equal(completedItems(again.events, 'agent_message')[0]?.text, 'resumed after: true');
  });

  test('a required MCP server that cannot connect: exit 1, no JSONL at all, the reason on stderr', async () => {
    const work = await tmp('ovs-cx-work');
    const before = fake.requests.length;

    const run = await runCodex(
      [
        'exec', ...execFlags(work),
        '-c', `mcp_servers.dead.url="http://127.0.0.1:${await deadPort()}/mcp"`,
        '-c', 'mcp_servers.dead.required=true',
        'hi',
      ],
      { cwd: work, env: env(), timeoutMs: TIMEOUT_MS },
    );

    assert.equal(run.code, 1, diag(run));
    assert.deepEqual(run.events, [], diag(run));
    assert.match(run.stderr, /required MCP servers failed to initialize: dead: /);
    assert.equal(fake.requests.length, before, 'no model request was made');
  });
});
