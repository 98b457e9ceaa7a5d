// The scripted model behind `overseer demo` (and its end-to-end test): a lead that fans out
// three agents with spawn_agent, waits for all of them, and summarises; children that report
// status, write one file each and call finish. Real claude processes run these turns.
import type { Script, StepContext } from './fakeAnthropic.js';

export const DEMO_FILES = [
  { file: 'hello.txt', content: 'Hello from agent one.\n' },
  { file: 'numbers.txt', content: '1\n2\n3\n' },
  { file: 'notes.md', content: '# Notes\n\nWritten by agent three.\n' },
];

/** Job ids from JSON tool results that carry a `job_id`. */
export function jobIdsIn(ctx: StepContext): string[] {
  const ids: string[] = [];
  for (const r of ctx.lastToolResults) {
    try {
      const v = JSON.parse(r.text) as { job_id?: string };
      if (v.job_id) ids.push(v.job_id);
    } catch {
      /* not JSON */
    }
  }
  return ids;
}

const leadScript: Script = (ctx) => {
  if (ctx.step === 0) {
    return {
      text: 'I will fan the work out to three agents.',
      tools: DEMO_FILES.map((f, i) => ({
        name: 'mcp__overseer__spawn_agent',
        input: { title: `write ${f.file}`, prompt: `@script:demo-child Create the file ${f.file} with this content:\n${f.content}`, labels: ['demo'], priority: 3 - i },
      })),
    };
  }
  if (ctx.step === 1) {
    const ids = jobIdsIn(ctx);
    return { text: `Spawned ${ids.join(', ')}. Waiting for all of them.`, tools: [{ name: 'mcp__overseer__wait_for_agents', input: { job_ids: ids, mode: 'all', timeout_s: 300 } }] };
  }
  const last = ctx.lastToolResults.at(-1)?.text ?? '{}';
  let done: { job_id: string; status: string; result: string | null }[] = [];
  try {
    done = (JSON.parse(last) as { done: typeof done }).done ?? [];
  } catch {
    /* keep empty */
  }
  return { text: `All agents finished:\n${done.map((d) => `- ${d.job_id}: ${d.status} — ${d.result ?? ''}`).join('\n')}` };
};

const childScript: Script = (ctx) => {
  const m = /Create the file (\S+) with this content:\n([\s\S]*)$/.exec(ctx.prompt);
  const file = m?.[1] ?? 'out.txt';
  const content = m?.[2] ?? '';
  const cwd = /working directory is `([^`]+)`/.exec(ctx.system)?.[1] ?? '.';
  if (ctx.step === 0) {
    return {
      tools: [
        { name: 'mcp__overseer__report_status', input: { message: `writing ${file}`, progress: 0.5 } },
        { name: 'Write', input: { file_path: `${cwd}/${file}`, content } },
      ],
    };
  }
  if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__finish', input: { result: `wrote ${file} (${content.length} bytes)`, outcome: 'success' } }] };
  return { text: `Done: ${file}.` };
};

export const demoScripts: Record<string, Script> = { 'demo-lead': leadScript, 'demo-child': childScript };

export const DEMO_LEAD_PROMPT = '@script:demo-lead Use Overseer to fan out three agents in parallel. Each creates one file in this repository: ' +
  DEMO_FILES.map((f) => `${f.file} containing ${JSON.stringify(f.content)}`).join('; ') +
  '. Spawn them with spawn_agent, wait for all of them with wait_for_agents, then summarise what each did.';
