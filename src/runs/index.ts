// Batch dispatch from a file (docs/dispatch.md): parsing and validation, the run engine, its store.
export { checkDispatch, formatOf, formatProblems, findCycles, TaskSchema, RulesSchema, type DispatchFormat, type DispatchSpec, type Problem, type TaskSpec } from './file.js';
export { RunService, runView, type DispatchRequest } from './runService.js';
export { type RunRow, type RunTaskRow, type RunStatus } from './store.js';
