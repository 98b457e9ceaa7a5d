// The dimensions a usage report is grouped by, apart from the usage tool's schema (usage.ts):
// `overseer --help` lists them, and must not load zod to do it (test/integration/cli-modules).

/** The dimensions a report is grouped by, as `overseer usage --by` and the usage tool name them. */
export const USAGE_DIMENSIONS = ['model', 'provider', 'label', 'workflow', 'template', 'project', 'day', 'kind'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];
