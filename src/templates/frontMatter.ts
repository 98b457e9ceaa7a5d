// YAML front matter of a Markdown file (templates and recipes): the text between a first line
// `---` and the next line `---` (or `...`) is a YAML mapping, parsed by the `yaml` library as
// YAML 1.2 defines it (quotes, comments, lists, block scalars); the rest is the body. A syntax
// error, a duplicate key or front matter that is not a mapping throws InvalidInputError naming
// the file and the line. Each key's line is kept so later checks can name it too.
import type * as Yaml from 'yaml';
import { lazyRequire } from '../lazy.js';
import { InvalidInputError } from '../errors.js';

export interface FrontMatter {
  /** The mapping's keys and values (plain JS: strings, numbers, booleans, null, arrays, objects). */
  data: Record<string, unknown>;
  /** 1-based line in the file of each top-level key. */
  lines: Record<string, number>;
  /** The text after the closing `---` (the whole text when there is no front matter). */
  body: string;
}

/** The yaml library, loaded by the first front matter to parse (src/lazy.ts). */
const yaml = lazyRequire<typeof Yaml>('yaml');

const OPEN = /^---[ \t]*$/;
const CLOSE = /^(---|\.\.\.)[ \t]*$/;

/** Split and parse the front matter of `text`; `file` is only used in error messages. */
export function parseFrontMatter(file: string, text: string): FrontMatter {
  const lines = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n').split('\n');
  if (!OPEN.test(lines[0] ?? '')) return { data: {}, lines: {}, body: text };
  const end = lines.findIndex((l, i) => i > 0 && CLOSE.test(l));
  if (end < 0) throw new InvalidInputError(`${file}:1: front matter opened with "---" is never closed: add a line "---" after it`);
  const yamlText = lines.slice(1, end).join('\n');
  const body = lines.slice(end + 1).join('\n');
  const { LineCounter, parseDocument, isMap, isScalar } = yaml();
  const counter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: counter, prettyErrors: false, uniqueKeys: true, version: '1.2' });
  /** File line of an offset in the YAML text (the YAML starts on line 2). */
  const lineAt = (offset: number): number => counter.linePos(offset).line + 1;
  const problems = doc.errors.map((e) => `${file}:${lineAt(e.pos[0])}: ${firstLine(e.message)}`);
  if (problems.length > 0) throw new InvalidInputError(`Invalid YAML front matter in ${file}:\n  ${problems.join('\n  ')}`);
  if (doc.contents === null) return { data: {}, lines: {}, body };
  if (!isMap(doc.contents)) {
    throw new InvalidInputError(`${file}:2: the front matter must be YAML "key: value" lines, not ${describe(doc.toJS())}`);
  }
  const keyLines: Record<string, number> = {};
  for (const item of doc.contents.items) {
    if (isScalar(item.key) && item.key.range) keyLines[String(item.key.value)] = lineAt(item.key.range[0]);
  }
  const data = doc.toJS({ maxAliasCount: 100 }) as Record<string, unknown>;
  return { data: data ?? {}, lines: keyLines, body };
}

const firstLine = (s: string): string => s.split('\n')[0]!.trim();

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  return `the ${typeof v} ${JSON.stringify(v)}`;
}
