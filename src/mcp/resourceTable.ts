// MCP resources from URI templates, as the SDK's McpServer served them (resources/list,
// resources/templates/list, resources/read, completion/complete for template variables), on a
// role's method table. Template matching is the SDK's RFC 6570 matcher (sdk/shared/uriTemplate.js,
// a module without dependencies).
import { UriTemplate, type Variables } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { ErrorCode, RpcError, type Params } from './rpc.js';
import type { Methods } from './methods.js';

export type { Variables };
export interface ResourceEntry { uri: string; name: string; title?: string; mimeType?: string; description?: string }
export interface ResourceMeta { title?: string; description?: string; mimeType?: string }
export interface ReadResult { contents: Record<string, unknown>[] }

interface Template {
  name: string;
  template: UriTemplate;
  meta: ResourceMeta;
  list?: () => { resources: ResourceEntry[] } | Promise<{ resources: ResourceEntry[] }>;
  complete?: Record<string, (value: string) => string[] | Promise<string[]>>;
  read: (uri: URL, vars: Variables) => ReadResult | Promise<ReadResult>;
}

const EMPTY_COMPLETION = { completion: { values: [], hasMore: false } };

export class ResourceTable {
  private readonly templates: Template[] = [];

  /** Serve resources on `methods` (and completion/complete once a template completes). */
  constructor(private readonly methods: Methods) {
    methods.capabilities.resources = { listChanged: true };
    methods.requests.set('resources/list', () => this.list());
    methods.requests.set('resources/templates/list', () => ({
      resourceTemplates: this.templates.map((t) => ({ name: t.name, uriTemplate: t.template.toString(), ...t.meta })),
    }));
    methods.requests.set('resources/read', (p) => this.read(p));
  }

  template(name: string, uriTemplate: string, o: { list?: Template['list']; complete?: Template['complete'] }, meta: ResourceMeta, read: Template['read']): void {
    if (this.templates.some((t) => t.name === name)) throw new Error(`Resource template ${name} is already registered`);
    this.templates.push({ name, template: new UriTemplate(uriTemplate), meta, list: o.list, complete: o.complete, read });
    if (o.complete && !this.methods.requests.has('completion/complete')) {
      this.methods.capabilities.completions = {};
      this.methods.requests.set('completion/complete', (p) => this.completeRequest(p));
    }
  }

  private async list(): Promise<{ resources: Record<string, unknown>[] }> {
    const resources: Record<string, unknown>[] = [];
    for (const t of this.templates) {
      if (!t.list) continue;
      for (const r of (await t.list()).resources) resources.push({ ...t.meta, ...r });
    }
    return { resources };
  }

  private async read(p: Params): Promise<ReadResult> {
    if (typeof p.uri !== 'string') throw new RpcError(ErrorCode.InvalidParams, 'Invalid resources/read request: params.uri must be a string');
    const uri = new URL(p.uri);
    for (const t of this.templates) {
      const vars = t.template.match(uri.toString());
      if (vars) return t.read(uri, vars);
    }
    throw new RpcError(ErrorCode.InvalidParams, `Resource ${uri} not found`);
  }

  private async completeRequest(p: Params): Promise<unknown> {
    const ref = p.ref as { type?: unknown; uri?: unknown; name?: unknown } | undefined;
    const arg = p.argument as { name?: unknown; value?: unknown } | undefined;
    if (!ref || typeof ref !== 'object' || !arg || typeof arg.name !== 'string' || typeof arg.value !== 'string') {
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid completion/complete request: ref and argument {name, value} are required');
    }
    if (ref.type === 'ref/prompt') throw new RpcError(ErrorCode.InvalidParams, `Prompt ${String(ref.name)} not found`);
    if (ref.type !== 'ref/resource') throw new RpcError(ErrorCode.InvalidParams, `Invalid completion reference: ${String(ref)}`);
    const t = this.templates.find((x) => x.template.toString() === ref.uri);
    if (!t) throw new RpcError(ErrorCode.InvalidParams, `Resource template ${String(ref.uri)} not found`);
    const completer = t.complete?.[arg.name];
    if (!completer) return EMPTY_COMPLETION;
    const values = await completer(arg.value);
    return { completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } };
  }
}
