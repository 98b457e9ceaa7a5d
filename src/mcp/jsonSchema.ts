// A tool's published input schema: the JSON Schema the MCP SDK's McpServer produced for it
// (zod-to-json-schema with strictUnions and the input side of pipes; `{type: "object",
// properties: {}}` for a schema that is not an object). Loaded at the first tools/list: a hub
// that nobody lists tools of never loads the converter.
import type { ZodTypeAny } from 'zod';
import { lazyRequire } from '../lazy.js';

type Convert = (schema: ZodTypeAny, options: { strictUnions: boolean; pipeStrategy: 'input' }) => Record<string, unknown>;
const converter = lazyRequire<{ zodToJsonSchema: Convert }>('zod-to-json-schema');

export function inputJsonSchema(schema: ZodTypeAny): Record<string, unknown> {
  if ((schema as { shape?: unknown }).shape === undefined) return { type: 'object', properties: {} };
  return converter().zodToJsonSchema(schema, { strictUnions: true, pipeStrategy: 'input' });
}
