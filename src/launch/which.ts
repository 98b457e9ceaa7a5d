// Locate an executable on PATH (no shell), the way `which` does.
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export function which(name: string, pathEnv = process.env.PATH ?? ''): string | undefined {
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** The first candidate that exists, for fallbacks such as our own node_modules/.bin. */
export function firstExisting(paths: string[]): string | undefined {
  return paths.find((p) => existsSync(p));
}
