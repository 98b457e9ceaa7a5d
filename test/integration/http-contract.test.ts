// The HTTP API parses what it shares with the lead's tools with the same contract schema
// (src/contract): the dashboard's job actions and note reads, and the requests API's answers.
// Each bad input gets the same reason over HTTP (400) as from the tool (isError), and changes
// nothing; a valid one gets past the schema to the service (here: an unknown job, 404).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';

let h: TestHub;
let base = '';
before(async () => {
  h = await startTestHub();
  base = new URL(h.hub.http!.url).origin;
});
after(async () => {
  await h.stop();
});

/** An HTTP call with the lead token: the status and the error message, if any. */
async function http(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; message?: string }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${h.hub.leadToken}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as { error?: { message: string } };
  return { status: res.status, message: json.error?.message };
}

/** An HTTP refusal's reasons, "field: why" each (src/web/api/http.ts joins them with "; "). */
const httpReasons = (message: string | undefined): string[] => (message ?? '').split('; ');

/**
 * The tool's refusal as "field: why" reasons: the MCP layer's own check of the schema's fields
 * says "why at field" per line (src/mcp/tools.ts); a refinement of the schema fails in the
 * handler's parse as "invalid_input: field: why; …" (src/tools/result.ts).
 */
async function refusal(tool: string, args: Record<string, unknown>): Promise<string[]> {
  const r = await h.callRaw(tool, args);
  assert.equal(r.isError, true, `${tool} refuses ${JSON.stringify(args).slice(0, 100)}`);
  const fields = new RegExp(`^MCP error -32602: Input validation error: Invalid arguments for tool ${tool}: `);
  if (fields.test(r.text)) {
    return r.text.replace(fields, '').split('\n').map((l) => {
      const at = l.lastIndexOf(' at ');
      return `${l.slice(at + 4)}: ${l.slice(0, at)}`;
    });
  }
  assert.match(r.text, /^invalid_input: /);
  return r.text.replace(/^invalid_input: /, '').split('; ');
}

test('a message to an agent: the dashboard refuses what message_agent refuses, with the same reason', async () => {
  for (const text of ['', 'x'.repeat(100_001)]) {
    const web = await http('POST', '/api/web/jobs/j-none/message', { text });
    assert.equal(web.status, 400);
    assert.deepEqual(httpReasons(web.message), await refusal('message_agent', { job_id: 'j-none', text }));
  }
  // Longer than the dashboard's old own limit (20,000) but within the contract's: the schema
  // lets it through and the service answers for the job.
  const long = await http('POST', '/api/web/jobs/j-none/message', { text: 'x'.repeat(30_000) });
  assert.equal(long.status, 404, long.message);
  assert.match(long.message!, /j-none/);
});

test('pause, resume and cancel: the tool schemas with the job id from the path', async () => {
  const mode = await http('POST', '/api/web/jobs/j-none/pause', { mode: 'sleep' });
  assert.equal(mode.status, 400);
  assert.deepEqual(httpReasons(mode.message), await refusal('pause_agent', { job_id: 'j-none', mode: 'sleep' }));
  // The id is the path's: a job_id in the body is an unknown field, not a second id.
  const twice = await http('POST', '/api/web/jobs/j-none/pause', { job_id: 'j-other' });
  assert.equal(twice.status, 400);
  assert.match(twice.message!, /job_id/);
  const reason = await http('POST', '/api/web/jobs/j-none/cancel', { reason: 'r'.repeat(2001) });
  assert.equal(reason.status, 400);
  assert.deepEqual(httpReasons(reason.message), await refusal('cancel_agent', { job_id: 'j-none', reason: 'r'.repeat(2001) }));
  const resume = await http('POST', '/api/web/jobs/j-none/resume', { message: '' });
  assert.equal(resume.status, 400);
  assert.deepEqual(httpReasons(resume.message), await refusal('resume_agent', { job_id: 'j-none', message: '' }));
});

test('a note read: the key rules of read_note', async () => {
  for (const key of ['/plan', 'plan//api', ' plan', 'k'.repeat(257)]) {
    const web = await http('GET', `/api/web/note?key=${encodeURIComponent(key)}`);
    assert.equal(web.status, 400, key);
    assert.deepEqual(httpReasons(web.message), await refusal('read_note', { key }), key);
  }
  const listed = await http('GET', `/api/web/notes?prefix=${encodeURIComponent('a\nb')}`);
  assert.equal(listed.status, 400);
  assert.deepEqual(httpReasons(listed.message), await refusal('list_notes', { prefix: 'a\nb' }));
  assert.equal((await http('GET', '/api/web/note?key=plan%2Fapi')).status, 404, 'a valid key gets to the notes');
});

test("an answer to a request: respond's fields and limits", async () => {
  const comment = 'c'.repeat(20_001);
  const web = await http('POST', '/api/requests/r-none/respond', { decision: 'approved', comment, channel: 'cli' });
  assert.equal(web.status, 400);
  assert.deepEqual(httpReasons(web.message), await refusal('respond', { request_id: 'r-none', decision: 'approved', comment }));
  const ok = await http('POST', '/api/requests/r-none/respond', { decision: 'approved', channel: 'cli' });
  assert.equal(ok.status, 404, ok.message);
});
