// The start gate: paces the CPU-heavy start of agent CLIs launched close together. Starting a
// `claude` costs about one core-second before its first model request (docs/cli-facts.md
// C6); eight started at once on two cores share the CPU and all reach the model late together.
// Through the gate at most `concurrency()` starts are in flight: a start holds its slot from its
// launch until the child opens its MCP session to the hub (the CLI is loaded; what is left before
// its first request is mostly the handshake), prints its first stream event, exits, or has held
// it `holdMs` (START_HOLD_MS, 1.5 s), whichever comes first; the next waiting start (first come,
// first served) is released then. So the first children reach the model sooner (measured: 3×)
// and the last only slightly later (~4 %). Pure logic: time comes from the injected timers.
import os from 'node:os';

export interface GateTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: GateTimers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** One start through the gate: waiting for a slot, then holding it until released. */
export interface StartTicket {
  /** It has its slot (its start was released). */
  readonly granted: boolean;
  /** Starts ahead of it in the queue (0 once granted). */
  position(): number;
  /**
   * Done with the gate: frees the slot when granted (the child reached its first event, or
   * ended), leaves the queue when still waiting (cancelled). Idempotent.
   */
  release(): void;
}

export interface StartGateOptions {
  /** Starts in flight at once, read each time a slot is to be given (≥ 1; may change, e.g. with the load). */
  concurrency: () => number;
  /** The longest one start holds its slot (a child that never prints still lets the next one go). */
  holdMs: number;
  timers?: GateTimers;
}

interface Entry {
  granted: boolean;
  done: boolean;
  onGrant: () => void;
  timer?: unknown;
}

export class StartGate {
  private readonly queue: Entry[] = [];
  private held = 0;
  private readonly timers: GateTimers;

  constructor(private readonly o: StartGateOptions) {
    this.timers = o.timers ?? systemTimers;
  }

  /** Starts holding a slot now. */
  get inFlight(): number { return this.held; }

  /** Starts waiting for a slot. */
  get waiting(): number { return this.queue.length; }

  /**
   * Asks for a slot; `onGrant` runs when it is given: synchronously inside this call when one is
   * free now (the ticket returned is then already `granted`), else later, in arrival order.
   */
  acquire(onGrant: () => void): StartTicket {
    const e: Entry = { granted: false, done: false, onGrant };
    const gate = this;
    const ticket: StartTicket = {
      get granted() { return e.granted; },
      position: () => (e.granted || e.done ? 0 : gate.queue.indexOf(e)),
      release: () => gate.release(e),
    };
    this.queue.push(e);
    this.pump();
    return ticket;
  }

  private limit(): number {
    const n = Math.floor(this.o.concurrency());
    return Number.isFinite(n) && n >= 1 ? n : 1;
  }

  private release(e: Entry): void {
    if (e.done) return;
    e.done = true;
    if (e.granted) {
      this.held--;
      if (e.timer !== undefined) this.timers.clearTimeout(e.timer);
    } else {
      const i = this.queue.indexOf(e);
      if (i >= 0) this.queue.splice(i, 1);
    }
    this.pump();
  }

  /** Gives free slots to the waiting starts, in order. */
  private pump(): void {
    while (this.queue.length > 0 && this.held < this.limit()) {
      const e = this.queue.shift()!;
      e.granted = true;
      this.held++;
      e.timer = this.timers.setTimeout(() => this.release(e), this.o.holdMs);
      try {
        e.onGrant();
      } catch {
        // A start that throws is its owner's failure; the slot must not be lost with it.
        this.release(e);
      }
    }
  }
}

/** Load per core above which the machine counts as overloaded by others. */
const OVERLOAD = 4;

/**
 * How many starts may be in flight: one per core the process may use. Only when other processes
 * already overload the machine (1-minute load average, less this hub's own starts in flight,
 * above 4× the cores) does the gate widen, by that excess: there held-back starts mostly hand CPU
 * time to the other processes, and the last child reached the model 1.5× later than with no gate
 * (measured at load 17–21 on 2 cores, docs/performance-fanout.md).
 */
export function autoStartConcurrency(parallelism: number, load1: number, ownInFlight = 0): number {
  const cores = Math.max(1, Math.floor(parallelism));
  const others = Math.max(0, load1 - ownInFlight);
  return Math.min(256, cores + Math.max(0, Math.round(others - OVERLOAD * cores)));
}


/** The longest one start holds its slot by default. */
export const START_HOLD_MS = 1500;

/** The hub's gate for a config value: undefined for 0 (no gate). */
export function makeStartGate(setting: number | 'auto', timers?: GateTimers, holdMs = START_HOLD_MS): StartGate | undefined {
  let gate: StartGate | undefined;
  const concurrency = gateConcurrency(setting, () => gate);
  if (!concurrency) return undefined;
  gate = new StartGate({ concurrency, holdMs, ...(timers ? { timers } : {}) });
  return gate;
}

/** The concurrency a config value asks for: > 0 fixed, 0 no gate (undefined), 'auto' from the machine. */
export function gateConcurrency(setting: number | 'auto', gate?: () => StartGate | undefined): (() => number) | undefined {
  if (setting === 'auto') return () => autoStartConcurrency(os.availableParallelism(), os.loadavg()[0] ?? 0, gate?.()?.inFlight ?? 0);
  if (setting <= 0) return undefined;
  return () => setting;
}
