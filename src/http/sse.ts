// The one writer and the one parser of server-sent events (text/event-stream): the hub's
// floor stream, the dashboard's output stream and the MCP endpoint's streams write frames with
// `sseFrame`, keep idle connections open with `keepAlive`; the stdio bridge, `overseer watch`
// and the status loops read them with `SseParser` / `readSse`. The framing is the WHATWG one:
// `field: value` lines, a blank line ends an event, several `data:` lines join with "\n",
// lines starting with ":" are comments, LF, CRLF or CR end a line.
import type { ServerResponse } from 'node:http';

/** The headers of an event stream the hub serves: never cached, never buffered by a proxy. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

export interface SseEvent {
  /** `message` when the frame names none. */
  event: string;
  data: string;
  /** The frame's `id:`, when it has one. */
  id?: string;
}

export interface SseFrame {
  event?: string;
  /** Text; each of its lines becomes one `data:` line (a JSON text has none). None: a frame of
   * fields only (e.g. `retry`), which delivers no event. */
  data?: string;
  id?: string;
  /** The client's reconnection delay, ms. */
  retry?: number;
}

/** One field's value may not hold a line break (it would end the field). */
function oneLine(field: string, v: string): string {
  if (/[\r\n]/.test(v)) throw new Error(`an SSE ${field} cannot hold a line break: ${JSON.stringify(v)}`);
  return v;
}

/** One event as it goes on the wire, blank line included. */
export function sseFrame(f: SseFrame): string {
  let s = f.event === undefined ? '' : `event: ${oneLine('event', f.event)}\n`;
  if (f.data !== undefined) s += /[\r\n]/.test(f.data) ? f.data.split(/\r\n|\r|\n/).map((l) => `data: ${l}\n`).join('') : `data: ${f.data}\n`;
  if (f.id !== undefined) s += `id: ${oneLine('id', f.id)}\n`;
  if (f.retry !== undefined) s += `retry: ${Math.max(0, Math.round(f.retry))}\n`;
  return `${s}\n`;
}

/** A comment frame: clients ignore it, proxies and sockets see traffic (a keep-alive). */
export function sseComment(text = ''): string {
  return `:${text ? ` ${oneLine('comment', text)}` : ''}\n\n`;
}

/** Write a comment on `res` every `everyMs` until it closes (or the returned stop is called);
 * the timer does not hold the process open. */
export function keepAlive(res: ServerResponse, everyMs: number, text = 'ping'): () => void {
  const frame = sseComment(text);
  const t = setInterval(() => { if (!res.writableEnded && !res.destroyed) res.write(frame); }, everyMs);
  t.unref();
  const stop = (): void => clearInterval(t);
  res.once('close', stop);
  return stop;
}

/** Events out of a stream's text, fed in chunks as they arrive (a line or an event may be split
 * anywhere between two chunks). */
export class SseParser {
  private buf = '';
  private event = '';
  private data: string[] = [];
  private id: string | undefined;
  /** A CR ended the last chunk: an LF opening the next one belongs to it. */
  private cr = false;

  /** The events this chunk completes. */
  push(chunk: string): SseEvent[] {
    if (this.cr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.cr = chunk.endsWith('\r');
    this.buf += chunk;
    const out: SseEvent[] = [];
    const lines = this.buf.split(/\r\n|\r|\n/);
    this.buf = lines.pop()!;
    for (const line of lines) this.line(line, out);
    return out;
  }

  /** The stream ended: an event left without its blank line is dropped, as the standard says. */
  end(): SseEvent[] {
    this.buf = '';
    this.event = '';
    this.data = [];
    return [];
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length) out.push({ event: this.event || 'message', data: this.data.join('\n'), ...(this.id !== undefined ? { id: this.id } : {}) });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const c = line.indexOf(':');
    const field = c < 0 ? line : line.slice(0, c);
    const value = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }
}

/** Every event of a response body, in order, until it ends; `onChunk` hears each chunk (a
 * silence watchdog). Rejects when the body breaks (the connection, an abort). */
export async function readSse(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>, each: (e: SseEvent) => void, onChunk?: () => void): Promise<void> {
  const p = new SseParser();
  const decoder = new TextDecoder();
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    onChunk?.();
    for (const e of p.push(decoder.decode(chunk, { stream: true }))) each(e);
  }
  for (const e of p.push(decoder.decode())) each(e);
  p.end();
}
