// Splits a byte stream (a child's stdout, a growing JSONL file) into complete text lines.
// Chunks may split anywhere, even inside a UTF-8 character; `\r\n` and `\n` both end a line;
// blank lines are skipped. Memory is bounded: a line longer than `maxLineBytes` is dropped
// whole while it streams by, and never held beyond the cap. Pure, no I/O.
import { StringDecoder } from 'node:string_decoder';

/** Options of a LineSplitter: the per-line byte cap and a hook told about dropped lines. */
export interface LineSplitterOptions {
  /** Longest line kept, in bytes, without its line ending. Default 8 MiB. */
  maxLineBytes?: number;
  /** Called once per dropped over-long line, with its size in bytes. */
  onOverflow?: (bytesDropped: number) => void;
}

const LF = 0x0a;
const CR = 0x0d;
const CR_BUF = Buffer.from([CR]);

/** Incremental line splitter: `push` chunks, `end` flushes a last line without newline. */
export class LineSplitter {
  readonly #onLine: (line: string) => void;
  readonly #onOverflow: ((bytesDropped: number) => void) | undefined;
  readonly #max: number;
  #decoder = new StringDecoder('utf8');
  #parts: string[] = [];
  #buffered = 0;
  #dropping = false;
  #dropped = 0;
  /** A `\r` seen at the end of a chunk: a line ending if the next byte is `\n`, else content. */
  #pendingCR = false;

  constructor(onLine: (line: string) => void, opts: LineSplitterOptions = {}) {
    const max = opts.maxLineBytes ?? 8 * 1024 * 1024;
    if (!Number.isFinite(max) || max < 1) throw new RangeError(`maxLineBytes must be >= 1, got ${max}`);
    this.#onLine = onLine;
    this.#onOverflow = opts.onOverflow;
    this.#max = Math.floor(max);
  }

  /** Bytes of the current unfinished line held in memory; never more than maxLineBytes. */
  get bufferedBytes(): number {
    return this.#buffered;
  }

  /** Feeds a chunk; emits every line it completes. Strings are taken as UTF-8. */
  push(chunk: Buffer | Uint8Array | string): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let i = 0;
    while (i < buf.length) {
      const nl = buf.indexOf(LF, i);
      if (nl === -1) {
        this.#segment(buf, i, buf.length, false);
        return;
      }
      this.#segment(buf, i, nl, true);
      i = nl + 1;
    }
  }

  /** Ends the stream: emits a final line that had no newline (or reports it as dropped). */
  end(): void {
    this.#pendingCR = false; // a lone trailing `\r` at EOF ends the line
    this.#finish();
  }

  /** Handles bytes [start, end) of `buf`; `complete` when a `\n` follows them. */
  #segment(buf: Buffer, start: number, end: number, complete: boolean): void {
    if (this.#pendingCR) {
      this.#pendingCR = false;
      // `\r` then `\n` is a line ending; `\r` then anything else is content.
      if (!(complete && start === end)) this.#append(CR_BUF);
    }
    if (this.#dropping) {
      this.#dropped += end - start;
    } else {
      let stop = end;
      if (stop > start && buf[stop - 1] === CR) stop--;
      this.#append(buf.subarray(start, stop));
      if (stop !== end && !complete) {
        if (this.#dropping) this.#dropped += 1;
        else this.#pendingCR = true;
      }
    }
    if (complete) this.#finish();
  }

  #append(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.#dropping) {
      this.#dropped += bytes.length;
      return;
    }
    if (this.#buffered + bytes.length > this.#max) {
      this.#dropping = true;
      this.#dropped = this.#buffered + bytes.length;
      this.#parts = [];
      this.#buffered = 0;
      this.#decoder.end(); // discard a half-decoded character
      return;
    }
    const text = this.#decoder.write(bytes);
    if (text) this.#parts.push(text);
    this.#buffered += bytes.length;
  }

  /** Closes the current line: emits it, or reports it dropped. State is reset first. */
  #finish(): void {
    if (this.#dropping) {
      const n = this.#dropped;
      this.#dropping = false;
      this.#dropped = 0;
      this.#onOverflow?.(n);
      return;
    }
    const line = this.#parts.join('') + this.#decoder.end();
    this.#parts = [];
    this.#buffered = 0;
    if (line.trim() !== '') this.#onLine(line);
  }
}
