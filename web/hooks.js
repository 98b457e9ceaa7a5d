// Data for the panels: a GET that is read again whenever the floor moves (the page's one live
// stream carries every change the hub announces: jobs, requests, notes, locks, workflows), at
// most once per `gapMs`, never two at once, and again after a reconnect. Only the panel on screen
// asks, so a page left on one tab costs the hub nothing for the others.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { get } from './api.js';

export function useLive(path, tick, gapMs = 300) {
  const [state, setState] = useState({ data: null, error: null, path });
  const r = useRef({ busy: false, again: false, last: 0, timer: 0, path, mounted: true });
  const run = useCallback(async () => {
    const s = r.current;
    if (!s.path) return;
    if (s.busy) { s.again = true; return; }
    const wait = s.last + gapMs - Date.now();
    if (wait > 0) { clearTimeout(s.timer); s.timer = setTimeout(run, wait); return; }
    s.busy = true;
    s.again = false;
    const asked = s.path;
    try {
      const data = await get(asked);
      if (s.mounted && asked === s.path) setState({ data, error: null, path: asked });
    } catch (e) {
      if (s.mounted && asked === s.path) setState((old) => ({ data: old.path === asked ? old.data : null, error: e.message, path: asked }));
    } finally {
      s.busy = false;
      s.last = Date.now();
      if (s.again && s.mounted) run();
    }
  }, [gapMs]);
  useEffect(() => () => { r.current.mounted = false; clearTimeout(r.current.timer); }, []);
  useEffect(() => {
    const s = r.current;
    if (s.path !== path) { s.path = path; s.last = 0; setState({ data: null, error: null, path }); }
    run();
  }, [path, tick]);
  const data = state.path === path ? state.data : null;
  return { data, error: state.path === path ? state.error : null, reload: () => { r.current.last = 0; run(); } };
}
