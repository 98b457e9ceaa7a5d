// The package's version, read from its package.json: the one module `overseer --version` needs.
import { readFileSync } from 'node:fs';

/** The version in overseer-mcp's package.json (dist/version.js and src/version.ts both sit one level below it). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
