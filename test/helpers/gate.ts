// A gate for end-to-end tests: a scripted step awaits `wait`, the test calls `open()` when the
// step may go on — ordering made explicit instead of a sleep.

export interface Gate {
  wait: Promise<void>;
  open: () => void;
}

/** A promise the test resolves by hand (with a fallback so a failing test cannot hang a child forever). */
export function gate(fallbackMs = 60_000): Gate {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
    setTimeout(resolve, fallbackMs).unref();
  });
  return { wait, open };
}
