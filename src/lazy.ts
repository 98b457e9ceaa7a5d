// Libraries the hub loads at first use instead of at start (docs/performance-hub-memory.md):
// most hubs never parse a dispatch file or a template's front matter, and every library loaded
// stays resident for the hub's life. `lazyRequire` loads a CommonJS package synchronously on its
// first call (so a synchronous caller stays synchronous); `lazyImport` an ES module. Tests read
// `lazyLoaded()` to check that a hub serves calls without them and loads one on first use.
import { createRequire } from 'node:module';

const loaded = new Set<string>();
const requireHere = createRequire(import.meta.url);

/** `name` (a CommonJS package), required on the first call of the returned function, then the same module. */
export function lazyRequire<T>(name: string): () => T {
  let mod: T | undefined;
  return () => {
    if (mod === undefined) {
      mod = requireHere(name) as T;
      loaded.add(name);
    }
    return mod;
  };
}

/** An ES module, imported on the first call of the returned function, then the same promise. */
export function lazyImport<T>(name: string, load: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= load().then((m) => {
    loaded.add(name);
    return m;
  }));
}

/** execa, for the commands the hub runs now and then (completion checks, gh, diagnosis): most
 * hubs never run one, and it is 130 modules (children start through node:child_process). */
export const loadExeca = lazyImport('execa', () => import('execa'));

/** For tests: the lazy modules this process has loaded so far. */
export function lazyLoaded(): ReadonlySet<string> {
  return loaded;
}
