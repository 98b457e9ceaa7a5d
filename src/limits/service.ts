// The hub's provider limiters: one breaker (src/limits/breaker.ts) per provider account, fed by
// what the children print (src/limits/signals.ts) and consulted by the runner before any attempt
// starts. While a breaker is open nothing new starts for that account (queued jobs stay queued),
// running children that meet the limit are paused where they meet it (SIGSTOP during their own
// retry wait: their next model call goes out only when the limiter lets it), and when the wait is
// over ONE attempt probes — a paused child first, else a queued job — before the rest go.
// Every change is written to the store (in order, one write after another), then put on the bus,
// so a restarted hub reopens what was open. The rows are read when the limiter is made; until they
// are (`ready()`, which the hub awaits before its first dispatch) nothing starts.
import type { Bus } from '../services/bus.js';
import type { Clock } from '../clock.js';
import type { Q } from '../store/sql/tx.js';
import type { Logger } from '../log.js';
import type { Account, Provider } from './account.js';
import { CLOSED, admit, nextWake, onLimit, onProbeGone, onSuccess, room, settle, type Admission, type BreakerSettings, type BreakerState, type LimitHit } from './breaker.js';
import { readLimit, saveLimitState, stateOf } from './store.js';

/** What the limiter asks of the runner. */
export interface LimitActions {
  /** Pause the running child of `jobId` at its limit; false when it cannot be (not running, gone). */
  pause(jobId: string, provider: Provider): boolean;
  /** Let a child the limiter paused go on; false when it is no longer paused (gone, or the lead resumed it). */
  unpause(jobId: string): boolean;
  /** Start whatever may start now (the runner's dispatch). */
  dispatch(): void;
}

export interface LimitsDeps {
  /** The asynchronous layer (ctx.sql.db). */
  q: Q;
  clock: Clock;
  bus: Bus;
  log: Logger;
  settings: BreakerSettings;
  /** The account of each provider, for this hub's children (src/limits/account.ts). */
  accounts: Record<Provider, Account>;
  /** [0, 1): the backoff's jitter. */
  rand?: () => number;
}

export class Limits {
  private readonly breakers = new Map<Provider, BreakerState>();
  /** Per provider: jobs whose child the limiter paused, oldest first (the first is the next probe). */
  private readonly paused = new Map<Provider, string[]>();
  /** Episodes (provider + when it opened) the lead has been told of in wait_for_agents. */
  private readonly toldLead = new Set<string>();
  private timer?: NodeJS.Timeout;
  private started = false;
  private closed = false;
  private loaded = false;
  /** start() was called before the rows were read: it runs when they are. */
  private startWanted = false;
  private readonly loading: Promise<void>;
  /** The writes of the breakers' changes, one after another. */
  private saving: Promise<void> = Promise.resolve();
  private readonly offRemote: () => void;

  constructor(private readonly d: LimitsDeps, private readonly actions: LimitActions) {
    this.loading = this.load();
    // Another hub on the database changed an account's limiter (same API key, same limit): read its row again.
    this.offRemote = d.bus.on('limit', (e) => this.reread(e.account), { remote: 'only', resync: () => this.reread(null) });
  }

  /**
   * Take the state another hub wrote for `account` (null: every account), after this hub's own
   * writes so far. This hub's paused children stay its own; a limit that passed lets them go and
   * starts what waited, as `answered` does.
   */
  private reread(account: string | null): Promise<void> {
    this.saving = this.saving.then(async () => {
      await this.loading;
      for (const p of this.providers()) {
        if (this.closed || (account !== null && this.d.accounts[p].id !== account)) continue;
        const row = await readLimit(this.d.q, this.d.accounts[p].id);
        if (!row || this.closed) continue;
        const before = this.breakers.get(p)!;
        const b = stateOf(row);
        this.breakers.set(p, b);
        if (before.phase !== 'closed' && b.phase === 'closed') {
          for (const id of this.paused.get(p)!.splice(0)) this.actions.unpause(id);
          this.dispatchAfterWrites();
        }
      }
      this.arm();
    }).catch((err: unknown) => this.d.log.warn({ err, account }, 'provider limit: another hub\'s change could not be read'));
    return this.saving;
  }

  private async load(): Promise<void> {
    try {
      for (const p of ['claude', 'codex'] as const) {
        const row = await readLimit(this.d.q, this.d.accounts[p].id);
        // A child paused before a restart is gone (reconcile ended it): nobody is paused now.
        const b = row ? stateOf(row) : CLOSED;
        this.breakers.set(p, b);
        this.paused.set(p, []);
        if (row && (row.paused_json !== '[]' || b.phase !== row.phase)) await saveLimitState(this.d.q, this.d.accounts[p], b, [], this.d.clock.now());
      }
    } catch (err) {
      this.d.log.error({ err }, 'provider limits: the state before this hub could not be read; every limiter starts closed');
      for (const p of ['claude', 'codex'] as const) {
        if (!this.breakers.has(p)) this.breakers.set(p, CLOSED);
        if (!this.paused.has(p)) this.paused.set(p, []);
      }
    }
    this.loaded = true;
    if (this.startWanted && !this.closed) {
      this.start();
      this.actions.dispatch();
    }
  }

  /** Resolves when the limiters' rows are read (the hub awaits it before it starts anything). */
  ready(): Promise<void> {
    return this.loading;
  }

  /** Resolves when every change made so far is written (tests). */
  async settled(): Promise<void> {
    await this.loading;
    await this.saving;
  }

  /** Arm the wake-up of what was open when the hub started (idempotent). */
  start(): void {
    if (this.started || this.closed) return;
    if (!this.loaded) {
      this.startWanted = true;
      return;
    }
    this.started = true;
    for (const p of this.providers()) if (this.breakers.get(p)!.phase !== 'closed') this.d.log.warn({ provider: p, ...this.view(p) }, 'provider limit still in force from before the restart');
    this.arm();
  }

  close(): void {
    this.closed = true;
    this.offRemote();
    if (this.timer) clearTimeout(this.timer);
  }

  /** How many attempts of `provider` may start now: all, one (the probe), none. */
  room(provider: string): 'all' | 'one' | 'none' {
    if (!this.loaded) return 'none';
    const b = this.breakers.get(provider as Provider);
    return b ? room(b, this.d.clock.now(), this.d.settings) : 'all';
  }

  /** Attempt `jobId` of `provider` wants to start: go, go as the probe, or wait. */
  admit(provider: string, jobId: string): Admission {
    if (!this.loaded) return 'wait';
    const p = provider as Provider;
    const b = this.breakers.get(p);
    if (!b) return 'go';
    const r = admit(b, jobId, this.d.clock.now(), this.d.settings);
    if (r.state !== b) this.set(p, r.state);
    if (r.admission === 'probe') this.d.log.info({ provider: p, jobId }, 'provider limit: one attempt probes');
    return r.admission;
  }

  /**
   * A child showed a limit answer. `retrying`: the CLI waits and asks again by itself, so the
   * child is paused until the limiter lets it; otherwise its attempt is ending anyway.
   */
  limitSeen(provider: string, jobId: string, hit: LimitHit, retrying: boolean): void {
    const p = provider as Provider;
    const b = this.breakers.get(p);
    if (!b || this.closed) return;
    const now = this.d.clock.now();
    const next = onLimit(b, hit, now, this.d.settings, (this.d.rand ?? Math.random)());
    if (b.phase === 'closed' || next.failures !== b.failures) {
      this.d.log.warn({ provider: p, jobId, kind: hit.kind, status: hit.status, until: next.until, basis: next.basis, failures: next.failures }, 'provider limit: no new attempts until it passes');
    }
    const list = this.paused.get(p)!;
    if (retrying && !list.includes(jobId) && this.actions.pause(jobId, p)) list.push(jobId);
    this.set(p, next);
    this.arm();
  }

  /** A model answered a child of `provider`: a probe's success closes the breaker and lets everyone go. */
  answered(provider: string, _jobId: string): void {
    const p = provider as Provider;
    const b = this.breakers.get(p);
    if (!b || b.phase === 'closed') return; // the common case: one map read per model answer
    const next = onSuccess(b, this.d.clock.now());
    if (next === b) return;
    this.d.log.info({ provider: p, openedFor: b.openedAt === null ? null : this.d.clock.now() - b.openedAt }, 'provider limit passed: every attempt may go');
    const list = this.paused.get(p)!.splice(0);
    this.set(p, next);
    for (const id of list) this.actions.unpause(id);
    this.arm();
    this.dispatchAfterWrites();
  }

  /** An attempt of `provider` ended; `hit` when it ended on a limit. A probe that ended otherwise frees its place. */
  attemptEnded(provider: string, jobId: string, hit?: LimitHit): void {
    const p = provider as Provider;
    const b = this.breakers.get(p);
    if (!b) return;
    const list = this.paused.get(p)!;
    const at = list.indexOf(jobId);
    if (at >= 0) list.splice(at, 1);
    if (hit) {
      this.limitSeen(p, jobId, hit, false);
      return;
    }
    const next = onProbeGone(b, jobId);
    if (next !== b || at >= 0) this.set(p, next);
    if (next !== b) this.wake();
  }

  /** Providers whose limit holds now and that the lead has not been told of (this episode). */
  untoldToLead(providers: Iterable<string>): Provider[] {
    return [...new Set(providers)].filter((p): p is Provider => {
      const b = this.breakers.get(p as Provider);
      return !!b && b.phase !== 'closed' && !this.toldLead.has(`${p}@${b.openedAt}`);
    });
  }

  /** The lead was told of these providers' limits (until they pass and open again). */
  toldToLead(providers: readonly Provider[]): void {
    for (const p of providers) this.toldLead.add(`${p}@${this.breakers.get(p)?.openedAt}`);
  }

  /** Is some provider's limit holding now? (A cheap check before looking closer.) */
  anyHolding(): boolean {
    for (const b of this.breakers.values()) if (b.phase !== 'closed') return true;
    return false;
  }

  /** Jobs the limiter has paused, per provider (the floor counts them as waiting). */
  pausedJobs(provider: string): readonly string[] {
    return this.paused.get(provider as Provider) ?? [];
  }

  /** The breaker of `provider` as it stands now (for logs and tests). */
  view(provider: string): BreakerState {
    const b = this.breakers.get(provider as Provider) ?? CLOSED;
    return settle(b, this.d.clock.now());
  }

  private providers(): Provider[] {
    return [...this.breakers.keys()];
  }

  /** Record a new state: store first (after the writes before it), then the bus (the floor and the notifier hear it). */
  private set(p: Provider, b: BreakerState): void {
    const before = this.breakers.get(p)!;
    this.breakers.set(p, b);
    const paused = [...this.paused.get(p)!];
    const now = this.d.clock.now();
    const news = before.phase !== b.phase || before.until !== b.until || before.probe?.id !== b.probe?.id;
    this.saving = this.saving.then(async () => {
      await saveLimitState(this.d.q, this.d.accounts[p], b, paused, now);
      if (news) this.d.bus.emit('limit', { provider: p, account: this.d.accounts[p].id, phase: b.phase });
    }).catch((err: unknown) => this.d.log.warn({ err, provider: p }, 'provider limit: its new state was not written'));
  }

  /**
   * Start queued work once the changes so far are written and on the bus: the floor, the notifier
   * and anyone watching see the limit pass before the jobs it held start (as when the store was
   * synchronous).
   */
  private dispatchAfterWrites(): void {
    void this.saving.then(() => { if (!this.closed) this.actions.dispatch(); });
  }

  /** The timer: at the earliest moment a breaker changes by itself (open → half open, a probe's lease). */
  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.started || this.closed) return;
    const wakes = this.providers().map((p) => nextWake(this.breakers.get(p)!, this.d.settings)).filter((w): w is number => w !== null);
    if (!wakes.length) return;
    const ms = Math.max(0, Math.min(...wakes) - this.d.clock.now());
    this.timer = setTimeout(() => this.wake(), Math.min(ms, 2 ** 31 - 1));
    this.timer.unref();
  }

  /**
   * A wait is over: each half-open breaker without a probe in flight sends one — the child paused
   * longest (thawed: its retry goes out at once), else the runner's dispatch starts one queued job.
   */
  private wake(): void {
    if (this.closed) return;
    const now = this.d.clock.now();
    let dispatch = false;
    for (const p of this.providers()) {
      const b = settle(this.breakers.get(p)!, now);
      if (b !== this.breakers.get(p)) this.set(p, b);
      if (room(b, now, this.d.settings) !== 'one') continue;
      const list = this.paused.get(p)!;
      let probed = false;
      while (list.length && !probed) {
        const id = list.shift()!;
        if (this.admit(p, id) !== 'probe') {
          list.unshift(id);
          break;
        }
        probed = this.actions.unpause(id);
        if (!probed) this.set(p, onProbeGone(this.breakers.get(p)!, id));
      }
      if (!probed) dispatch = true;
    }
    this.arm();
    if (dispatch) this.dispatchAfterWrites();
  }
}
