// A child's stderr kept on disk beside its transcript, bounded: the file holds at most twice
// `cap` bytes while the child runs and exactly its last `cap` bytes once closed (older output is
// dropped, the newest is what explains a failure). Writes are synchronous appends: stderr is
// low-volume, and a hub that dies mid-run still leaves what was written.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const STDERR_CAP = 1024 * 1024;

export class StderrLog {
  private tail: Buffer = Buffer.alloc(0);
  private size = 0;
  private failed = false;

  constructor(readonly path: string, private readonly cap = STDERR_CAP) {
    try {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, '');
    } catch {
      this.failed = true;
    }
  }

  write(chunk: Buffer): void {
    this.tail = Buffer.concat([this.tail, chunk]);
    if (this.tail.length > this.cap) this.tail = this.tail.subarray(this.tail.length - this.cap);
    if (this.failed) return;
    try {
      if (this.size + chunk.length > 2 * this.cap) {
        writeFileSync(this.path, this.tail);
        this.size = this.tail.length;
      } else {
        appendFileSync(this.path, chunk);
        this.size += chunk.length;
      }
    } catch {
      this.failed = true;
    }
  }

  /** The last `chars` characters written (for the failure classifier). */
  text(chars: number): string {
    return this.tail.subarray(Math.max(0, this.tail.length - chars * 4)).toString('utf8').slice(-chars);
  }

  /** Leave exactly the last `cap` bytes on disk. */
  close(): void {
    if (this.failed || this.size <= this.cap) return;
    try {
      writeFileSync(this.path, this.tail);
      this.size = this.tail.length;
    } catch {
      this.failed = true;
    }
  }
}
