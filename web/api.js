// The page's calls to its hub: JSON over fetch with the session cookie and, for changes, the
// session's CSRF token; the floor as a server-sent-event stream that reconnects by itself.
let csrf = '';

/** Loads the session (its CSRF token); false when this browser is not logged in. */
export async function session() {
  const r = await fetch('/api/web/session', { credentials: 'same-origin' });
  if (r.status === 401) return false;
  if (!r.ok) throw new Error(`the hub answered ${r.status}`);
  const s = await r.json();
  csrf = s.csrf;
  return s;
}

async function reply(r) {
  const text = await r.text();
  let body;
  try { body = text ? JSON.parse(text) : {}; } catch { body = { error: { message: text } }; }
  if (!r.ok) throw new Error(body?.error?.message ?? `the hub answered ${r.status}`);
  return body;
}

export const get = async (path) => reply(await fetch(path, { credentials: 'same-origin' }));

export const post = async (path, body) => reply(await fetch(path, {
  method: 'POST', credentials: 'same-origin',
  headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
  body: JSON.stringify(body ?? {}),
}));

/** The floor, live: calls onFloor with each frame and onState('live'|'reconnecting'|'logged_out'). */
export function floorStream(onFloor, onState) {
  let es;
  let closed = false;
  const open = () => {
    es = new EventSource('/api/floor/stream');
    es.addEventListener('floor', (e) => { onState('live'); onFloor(JSON.parse(e.data)); });
    es.onerror = async () => {
      if (closed) return;
      onState('reconnecting');
      if (es.readyState === EventSource.CLOSED) {
        // The browser gave up (e.g. a 401 after the session expired, or the hub restarted on
        // another port): find out which, and try again.
        es.close();
        try {
          if ((await session()) === false) return onState('logged_out');
        } catch { /* the hub is down: keep trying */ }
        setTimeout(() => { if (!closed) open(); }, 1000);
      }
    };
  };
  open();
  return () => { closed = true; es?.close(); };
}

/** A job's output, live: onLines(chunk) for each batch of readable lines (resumes where it was). */
export function outputStream(jobId, onLines) {
  const es = new EventSource(`/api/web/jobs/${encodeURIComponent(jobId)}/output/stream`);
  es.addEventListener('lines', (e) => onLines(JSON.parse(e.data)));
  return () => es.close();
}
