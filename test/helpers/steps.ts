// Reading a scripted step's context (fake Anthropic API) in end-to-end tests with real claude children.
import type { StepContext, ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';

/** The child's working directory, as the hub's system prompt states it ('.' if absent). */
export const cwdOf = (ctx: StepContext): string => /working directory is `([^`]+)`/.exec(ctx.system)?.[1] ?? '.';

/** The first tool result in the last user message; throws when there is none. */
export const lastResult = (ctx: StepContext): ToolResultInfo => {
  const r = ctx.lastToolResults[0];
  if (!r) throw new Error(`step ${ctx.step}: no tool result in the last user message`);
  return r;
};
