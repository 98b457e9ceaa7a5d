// A child's stream is handled line by line in the hub (src/services/supervisor.ts). If handling
// one line throws (a bug, a file system refusing), that must not take the hub and every other
// child down: the error is logged, the stream goes on, and the job ends on its real result.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { waitForJob } from '../helpers/wait.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

test('a line whose handling throws is logged and skipped; the job still ends on its result', async () => {
  const h = await startTestHub({ processes: new ScriptedLauncher(() => ({ resultText: 'all done' })) });
  hubs.push(h);
  const seen: string[] = [];
  // The runner hands every line to the transcript index (src/search): make that index throw once.
  const indexer = h.hub.search.indexer;
  const real = indexer.line.bind(indexer);
  indexer.line = (jobId, attempt, line) => {
    seen.push(line);
    if (seen.length === 1) throw new Error('the transcript index broke on this line');
    real(jobId, attempt, line);
  };
  const { job_id } = await h.call('spawn_agent', { prompt: 'one turn' });
  const j = await waitForJob(h.hub, job_id, (x) => x.status !== 'running' && x.status !== 'queued', 30_000);
  assert.equal(j.status, 'succeeded');
  assert.equal(j.result, 'all done');
  assert.ok(seen.length >= 2, `lines after the failing one were handled (${seen.length})`);
});
