// The page's calls to its hub: JSON over fetch with the session cookie and, for changes, the
// session's CSRF token; the floor as a server-sent-event stream that survives the hub going
// away and coming back (the hub reuses its port and its cookie key, so the same page and the
// same session find it again).
let csrf = '';

export const enc = encodeURIComponent;

/** Loads the session (its CSRF token); false when this browser is not logged in. Throws when the hub does not answer. */
export async function session() {
  const r = await fetch('/api/web/session', { credentials: 'same-origin', cache: 'no-store' });
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

const hubDown = (e) => new Error(`the hub did not answer (${e.message}): it may be restarting`);

export async function get(path) {
  let r;
  try { r = await fetch(path, { credentials: 'same-origin', cache: 'no-store' }); } catch (e) { throw hubDown(e); }
  return reply(r);
}

export async function post(path, body) {
  let r;
  try {
    r = await fetch(path, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
      body: JSON.stringify(body ?? {}),
    });
  } catch (e) { throw hubDown(e); }
  return reply(r);
}

/**
 * The floor, live. onFloor(floor) for each frame; onState('live' | 'down' | 'logged_out').
 * When the stream breaks (the hub stopped, crashed, restarted) the page says so at once and
 * tries again by itself — 0.5 s, then doubling up to 5 s — asking /api/web/session first, so an
 * ended session shows how to log in instead of retrying forever. Each frame is the whole floor,
 * so the first one after a reconnect resynchronises everything.
 */
export function floorStream(onFloor, onState) {
  let es;
  let closed = false;
  let timer;
  let wait = 500;
  const retry = async () => {
    if (closed) return;
    let s;
    try { s = await session(); } catch { s = undefined; }
    if (closed) return;
    if (s === false) return onState('logged_out');
    if (s === undefined) {
      wait = Math.min(wait * 2, 5000);
      timer = setTimeout(retry, wait);
      return;
    }
    open();
  };
  const open = () => {
    es = new EventSource('/api/floor/stream');
    es.addEventListener('floor', (e) => {
      wait = 500;
      onFloor(JSON.parse(e.data));
      onState('live');
    });
    es.onerror = () => {
      if (closed) return;
      // Not the browser's own retry: it cannot tell a hub that is down from a session that ended.
      es.close();
      onState('down');
      clearTimeout(timer);
      timer = setTimeout(retry, wait);
    };
  };
  open();
  return () => { closed = true; clearTimeout(timer); es?.close(); };
}

/** A job's output, live: onLines(chunk) per batch of readable lines (resumes where it was after a drop). */
export function outputStream(jobId, attempt, onLines) {
  const es = new EventSource(`/api/web/jobs/${enc(jobId)}/output/stream${attempt ? `?attempt=${attempt}` : ''}`);
  es.addEventListener('lines', (e) => onLines(JSON.parse(e.data)));
  return () => es.close();
}
