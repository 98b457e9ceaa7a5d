// An open /api/floor/stream (docs/floor.md "The API") read as a test sees it: each frame parsed and
// checked for its shape as it arrives (with the time), the comment lines, and `next(pred, ms)`
// waiting for a frame that matches, with a deadline.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import type { Floor } from '../../src/floor/types.js';

export interface Frame { at: number; floor: Floor }

export interface FloorStream { frames: Frame[]; comments: string[]; next(pred: (f: Floor) => boolean, ms?: number): Promise<Frame>; close(): void }

/** An open /api/floor/stream: frames as they arrive (with the time), comment lines, close(). */
export async function openFloorStream(origin: string, token: string): Promise<FloorStream> {
  const ac = new AbortController();
  const res = await fetch(`${origin}/api/floor/stream`, { headers: { authorization: `Bearer ${token}` }, signal: ac.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const frames: Frame[] = [];
  const comments: string[] = [];
  const waiters: (() => void)[] = [];
  void (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += value;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const lines = block.split('\n');
          if (lines.every((l) => l.startsWith(':'))) { comments.push(block); continue; }
          assert.equal(lines[0], 'event: floor', `a frame starts with its event name: ${block.slice(0, 80)}`);
          assert.equal(lines.length, 3, 'one data line and its id per frame');
          assert.ok(lines[1]!.startsWith('data: '));
          assert.match(lines[2]!, /^id: [0-9a-f]{8}\.\d+$/);
          frames.push({ at: performance.now(), floor: JSON.parse(lines[1]!.slice(6)) as Floor });
          for (const w of waiters.splice(0)) w();
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  return {
    frames,
    comments,
    async next(pred, ms = 10_000) {
      const deadline = performance.now() + ms;
      let seen = 0;
      for (;;) {
        for (; seen < frames.length; seen++) if (pred(frames[seen]!.floor)) return frames[seen]!;
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`no matching floor frame within ${ms} ms (${frames.length} frames)`);
        await new Promise<void>((r) => { waiters.push(r); setTimeout(r, left).unref(); });
      }
    },
    close: () => ac.abort(),
  };
}
