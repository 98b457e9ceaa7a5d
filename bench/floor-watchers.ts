// Worker thread of bench/floor.ts (started with startTsWorker): holds N open /api/floor/stream
// connections to the hub (lead token) on an event loop of its own, parses every frame as a
// watcher would, and tells the main thread when stream 0 got a frame (its wall-clock time and
// the locked paths in it). Not a benchmark by itself.
//
// Messages in:  { id, cmd: 'open', url, token, n } | { id, cmd: 'close' }
// Messages out: { id, ok: true, result } | { id, ok: false, error } | { frame: { wall, locks, bytes } }
import { parentPort } from 'node:worker_threads';
import { SseParser } from '../src/http/sse.js';
import type { Floor } from '../src/floor/types.js';
import { wallMs } from './common.js';

export type WatcherRequest = { id: number; cmd: 'open'; url: string; token: string; n: number } | { id: number; cmd: 'close' };
export interface FrameNote { wall: number; locks: string[]; bytes: number }

let streams: AbortController[] = [];

async function openOne(url: string, token: string, index: number): Promise<void> {
  const ac = new AbortController();
  streams.push(ac);
  const res = await fetch(new URL('/api/floor/stream', url), { headers: { authorization: `Bearer ${token}` }, signal: ac.signal });
  if (res.status !== 200 || !res.body) throw new Error(`/api/floor/stream answered HTTP ${res.status}: ${await res.text()}`);
  let first!: () => void;
  const gotFirst = new Promise<void>((r) => { first = r; });
  void (async () => {
    const sse = new SseParser();
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        for (const ev of sse.push(decoder.decode(chunk, { stream: true }))) {
          if (ev.event !== 'floor') continue;
          const wall = wallMs();
          const f = JSON.parse(ev.data) as Floor;
          first();
          if (index === 0) parentPort!.postMessage({ frame: { wall, locks: f.locks.map((l) => l.path), bytes: ev.data.length } satisfies FrameNote });
        }
      }
    } catch {
      // closed
    }
  })();
  await gotFirst;
}

parentPort!.on('message', (m: WatcherRequest) => {
  void (async () => {
    try {
      if (m.cmd === 'open') {
        for (let i = 0; i < m.n; i++) await openOne(m.url, m.token, streams.length);
        parentPort!.postMessage({ id: m.id, ok: true, result: streams.length });
      } else {
        for (const s of streams) s.abort();
        streams = [];
        parentPort!.postMessage({ id: m.id, ok: true, result: 0 });
      }
    } catch (err) {
      parentPort!.postMessage({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) });
    }
  })();
});
