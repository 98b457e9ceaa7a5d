// Parses a server-sent-events body into its events (tests of the fake model APIs).
import assert from 'node:assert/strict';

export interface SseEvent {
  event: string;
  data: any;
}

/** `event:`/`data:` frames separated by blank lines; any other line fails the test. */
export function parseSse(raw: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const chunk of raw.split('\n\n')) {
    if (!chunk.trim()) continue;
    let event = '';
    const data: string[] = [];
    for (const line of chunk.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
      else assert.fail(`unexpected SSE line: ${JSON.stringify(line)}`);
    }
    out.push({ event, data: JSON.parse(data.join('\n')) });
  }
  return out;
}
