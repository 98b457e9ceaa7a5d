// The scripted agent that holds a file for end-to-end lock tests: it locks `file` with
// lock_files, then waits for the test to open `release`, then finishes (its locks end with it).
import type { Script } from '../../src/fakemodel/fakeAnthropic.js';
import type { Gate } from './gate.js';

export const finishStep = (result: string) => ({ tools: [{ name: 'mcp__overseer__finish', input: { result } }] });

export function holderScript(release: Gate, file = 'shared.txt'): Script {
  return async (ctx) => {
    if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: [file], reason: 'A owns it' } }] };
    if (ctx.step === 1) { await release.wait; return finishStep('A is done'); }
    return { text: 'done' };
  };
}
