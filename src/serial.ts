// Work queued per key (a workflow, a debate), one step at a time: each step runs after every
// earlier one of the same key has settled; a failing step goes to `onError` and the chain never
// rejects, so a later step still runs.
export class SerialChains {
  private readonly chains = new Map<string, Promise<void>>();

  constructor(private readonly onError: (key: string, err: unknown) => Promise<void>) {}

  run(key: string, fn: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(key) ?? Promise.resolve()).then(fn).catch((err: unknown) => this.onError(key, err).catch(() => undefined));
    this.chains.set(key, next);
    return next;
  }

  /** Resolves when what is queued for `key` now is done. */
  idle(key: string): Promise<void> {
    return this.chains.get(key) ?? Promise.resolve();
  }

  /** Resolves when what is queued for every key now is done. */
  async drain(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }
}
