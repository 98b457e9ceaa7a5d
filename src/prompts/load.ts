// Prompt templates live in prompts/*.md with YAML-ish front matter (`key: value` lines).
// `{{name}}` placeholders are filled by `renderPrompt`; unknown placeholders are an error so a
// typo cannot silently send a broken prompt.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PromptTemplate {
  name: string;
  meta: Record<string, string>;
  body: string;
}

/** Split `---` front matter from the body. */
export function parsePrompt(name: string, text: string): PromptTemplate {
  const m = /^---\n([\s\S]*?)\n---\n?([\s\S]*)$/.exec(text.replace(/\r\n/g, '\n'));
  if (!m) return { name, meta: {}, body: text };
  const meta: Record<string, string> = {};
  for (const line of m[1]!.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) meta[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return { name, meta, body: m[2]! };
}

/** Fill `{{var}}` placeholders; a placeholder with no value throws. */
export function renderPrompt(t: PromptTemplate, vars: Record<string, string | number>): string {
  return t.body.replace(/\{\{(\w+)\}\}/g, (_, k: string) => {
    const v = vars[k];
    if (v === undefined) throw new Error(`prompt ${t.name}: no value for {{${k}}}`);
    return String(v);
  });
}

/** Loads prompts from a directory once and caches them. */
export class PromptLibrary {
  private readonly cache = new Map<string, PromptTemplate>();
  constructor(private readonly dir: string) {}

  get(name: string): PromptTemplate {
    let t = this.cache.get(name);
    if (!t) {
      t = parsePrompt(name, readFileSync(join(this.dir, `${name}.md`), 'utf8'));
      this.cache.set(name, t);
    }
    return t;
  }

  render(name: string, vars: Record<string, string | number>): string {
    return renderPrompt(this.get(name), vars).trim();
  }
}
