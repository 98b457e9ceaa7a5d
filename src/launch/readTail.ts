// Reading the end of a growing JSONL file (agent transcripts can be huge): the last lines,
// read backwards from the end in growing chunks and bounded by maxBytes; and a follower
// that yields lines as they are appended, driven by fs.watch (no polling).
import { open, stat } from 'node:fs/promises';
import { statSync, watch, type FSWatcher, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';
import { LineSplitter } from './lineSplitter.js';

const LF = 0x0a;
const FIRST_CHUNK = 64 * 1024;
const FOLLOW_CHUNK = 1024 * 1024;

const isEnoent = (err: unknown): boolean => (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';

/** Complete, non-blank lines of `buf`; the leading fragment is dropped unless `atStart`. */
function completeLines(buf: Buffer, atStart: boolean): string[] {
  const last = buf.lastIndexOf(LF);
  if (last === -1) return [];
  const first = atStart ? 0 : buf.indexOf(LF) + 1;
  if (first > last) return [];
  return buf
    .toString('utf8', first, last)
    .split('\n')
    .map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
    .filter((l) => l.trim() !== '');
}

/** The last `maxLines` complete non-blank lines of `file`, reading at most `maxBytes` from its end; [] if missing. */
export async function readTailLines(file: string, maxLines: number, maxBytes: number = 4 * 1024 * 1024): Promise<string[]> {
  if (!(maxLines >= 1) || !(maxBytes >= 1)) return [];
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    if (isEnoent(err)) return [];
    throw err;
  }
  try {
    const size = (await fh.stat()).size;
    const chunks: Buffer[] = [];
    let start = size;
    let chunk = FIRST_CHUNK;
    let lines: string[] = [];
    while (start > 0 && size - start < maxBytes) {
      const n = Math.min(chunk, start, maxBytes - (size - start));
      start -= n;
      const buf = Buffer.allocUnsafe(n);
      let got = 0;
      while (got < n) {
        const { bytesRead } = await fh.read(buf, got, n - got, start + got);
        if (bytesRead === 0) break; // file shrank under us
        got += bytesRead;
      }
      chunks.unshift(got === n ? buf : buf.subarray(0, got));
      lines = completeLines(Buffer.concat(chunks), start === 0);
      if (lines.length >= maxLines) break;
      chunk *= 2;
    }
    return lines.slice(-Math.floor(maxLines));
  } finally {
    await fh.close();
  }
}

/**
 * Yields each line appended to `file` after this call, until `signal` aborts. Waits on
 * fs.watch of the file, or of its directory while the file does not exist (yet); a truncated
 * or replaced file is read again from its start. The start position is taken at call time.
 */
export function followLines(file: string, signal: AbortSignal): AsyncGenerator<string> {
  let startPos = 0;
  try {
    startPos = statSync(file).size;
  } catch {
    startPos = 0; // missing: every line of the file-to-be is new
  }
  return follow(file, signal, startPos);
}

async function* follow(file: string, signal: AbortSignal, startPos: number): AsyncGenerator<string> {
  const base = basename(file);
  const queue: string[] = [];
  let splitter = new LineSplitter((l) => queue.push(l));
  let pos = startPos;
  let ino: number | undefined;
  let skipPartial = false; // started mid-line: drop the rest of that line
  let watcher: FSWatcher | undefined;
  let watchingFile = false;
  let needRewatch = false;
  let dirty = true;
  let wake: (() => void) | undefined;
  const poke = (): void => {
    dirty = true;
    const w = wake;
    wake = undefined;
    w?.();
  };
  const rewatch = (): void => {
    watcher?.close();
    try {
      watcher = watch(file, (event) => {
        if (event === 'rename') needRewatch = true; // deleted or replaced
        poke();
      });
      watchingFile = true;
    } catch (err) {
      if (!isEnoent(err)) throw err;
      watcher = watch(dirname(file), (_e, name) => {
        if (name == null || String(name) === base) poke();
      });
      watchingFile = false;
    }
    watcher.on('error', () => {
      needRewatch = true;
      poke();
    });
    poke(); // events between close and watch are lost: look again
  };
  signal.addEventListener('abort', poke);
  try {
    if (signal.aborted) return;
    const first = await statOrUndefined(file);
    if (first) {
      ino = first.ino;
      if (pos > 0 && pos <= first.size) skipPartial = (await byteAt(file, pos - 1)) !== LF;
    }
    rewatch();
    while (!signal.aborted) {
      dirty = false;
      const st = await statOrUndefined(file);
      if (needRewatch || (!watchingFile && st)) {
        needRewatch = false;
        rewatch();
      }
      if (!st && pos > 0) {
        pos = 0; // deleted: a file created later is all new
        ino = undefined;
        skipPartial = false;
        splitter = new LineSplitter((l) => queue.push(l));
      }
      if (st) {
        if (st.size < pos || (ino !== undefined && st.ino !== ino)) {
          pos = 0; // truncated or replaced
          skipPartial = false;
          splitter = new LineSplitter((l) => queue.push(l));
        }
        ino = st.ino;
        while (pos < st.size && !signal.aborted) {
          const buf = await readAt(file, pos, Math.min(FOLLOW_CHUNK, st.size - pos));
          if (buf.length === 0) break;
          pos += buf.length;
          let data = buf;
          if (skipPartial) {
            const nl = data.indexOf(LF);
            data = nl === -1 ? data.subarray(data.length) : data.subarray(nl + 1);
            skipPartial = nl === -1;
          }
          splitter.push(data);
          while (queue.length > 0 && !signal.aborted) yield queue.shift()!;
        }
      }
      if (!dirty && !signal.aborted) await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal.removeEventListener('abort', poke);
    watcher?.close();
  }
}

async function statOrUndefined(file: string): Promise<Stats | undefined> {
  try {
    return await stat(file);
  } catch (err) {
    if (isEnoent(err)) return undefined;
    throw err;
  }
}

/** Reads up to `len` bytes at `pos`; a file gone meanwhile reads as empty. */
async function readAt(file: string, pos: number, len: number): Promise<Buffer> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    if (isEnoent(err)) return Buffer.alloc(0);
    throw err;
  }
  try {
    const buf = Buffer.allocUnsafe(len);
    let got = 0;
    while (got < len) {
      const { bytesRead } = await fh.read(buf, got, len - got, pos + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}

async function byteAt(file: string, pos: number): Promise<number | undefined> {
  return (await readAt(file, pos, 1))[0];
}
