// The script API as the script sees it, in JavaScript that runs inside the sandbox (src/scripts/
// sandbox.ts) before the script. Only `__call`, `__log`, `__phase` and `__budget` come from the
// hub; everything else is built here from them, so a script can reach nothing but these. A bundled
// script of the hub's (`__privileged`, src/scripts/bundled.ts) also gets `hub.call(kind, ...args)`
// for its own calls; the hub refuses them from any other run as well.
// parallel() and pipeline() follow Claude Code's Workflow: parallel is a barrier whose failed
// thunks give null; pipeline runs each item through every stage with no barrier between stages,
// a stage gets (previous result, original item, index), and a stage that throws drops its item to
// null. Date.now(), argless new Date() and Math.random() throw: a run is replayed from its journal
// after a crash, and what they return would differ (docs/scripts.md).
export const PRELUDE = String.raw`
(() => {
  const g = globalThis;
  const call = g.__call, log = g.__log, phase = g.__phase, budgetNow = g.__budget, privileged = g.__privileged === true;
  for (const k of ['__call', '__log', '__phase', '__budget', '__privileged']) delete g[k];
  const fromJson = (t) => (t === undefined ? undefined : JSON.parse(t));
  const toJson = (what, v) => {
    try { return v === undefined ? undefined : JSON.stringify(v); }
    catch (e) { throw new TypeError(what + ' must be plain data (JSON): ' + e.message); }
  };
  const invoke = (kind, args) => {
    // Made at the call, so that its stack names the script's line of the call.
    const err = new Error();
    return call(kind, toJson(kind + '() arguments', args)).then(fromJson, (e) => {
      err.message = e && e.message ? e.message : String(e);
      err.name = e && e.name ? e.name : 'Error';
      if (e && e.code) err.code = e.code;
      throw err;
    });
  };
  const def = (name, value) => Object.defineProperty(g, name, { value, enumerable: false, writable: false, configurable: false });
  def('agent', (prompt, opts) => invoke('agent', opts === undefined ? [prompt] : [prompt, opts]));
  def('approve', (summary, plan) => invoke('approve', plan === undefined ? [summary] : [summary, plan]));
  def('workflow', (name, args) => invoke('workflow', args === undefined ? [name] : [name, args]));
  if (privileged) def('hub', Object.freeze({ call: (kind, ...args) => invoke(String(kind), args) }));
  def('log', (message) => { log(String(message)); });
  def('phase', (title) => { phase(String(title)); });
  def('parallel', (thunks) => {
    if (!Array.isArray(thunks)) return Promise.reject(new TypeError('parallel() takes an array of functions, e.g. parallel(items.map((x) => () => agent(x)))'));
    return Promise.all(thunks.map((t, i) => {
      if (typeof t !== 'function') return Promise.reject(new TypeError('parallel(): item ' + i + ' is not a function; wrap the call: () => agent(...)'));
      return Promise.resolve().then(t).catch(() => null);
    }));
  });
  def('pipeline', (items, ...stages) => {
    if (!Array.isArray(items)) return Promise.reject(new TypeError('pipeline() takes an array of items first, then the stages'));
    return Promise.all(items.map(async (item, index) => {
      let v = item;
      for (const stage of stages) {
        if (v === null) break;
        try { v = await stage(v, item, index); } catch { return null; }
      }
      return v;
    }));
  });
  // Claude Code's shape (total, spent(), remaining()) in dollars; reserved() is Overseer's: what
  // running agent() calls hold, so remaining() is what a new call may still reserve.
  def('budget', Object.freeze({
    get total() { return JSON.parse(budgetNow()).total; },
    spent() { return JSON.parse(budgetNow()).spent; },
    reserved() { return JSON.parse(budgetNow()).reserved; },
    remaining() { const b = JSON.parse(budgetNow()); return b.total === null ? Infinity : Math.max(0, Math.round((b.total - b.spent - b.reserved) * 1e6) / 1e6); },
  }));
  const RealDate = Date;
  const noClock = (what) => () => { throw new Error(what + ' is not available in a script: a run is replayed after a crash and the value would differ. Pass times in through args.'); };
  function ScriptDate(...a) {
    if (a.length === 0) noClock('new Date()')();
    return new.target ? new RealDate(...a) : RealDate(...a);
  }
  ScriptDate.prototype = RealDate.prototype;
  ScriptDate.UTC = RealDate.UTC;
  ScriptDate.parse = RealDate.parse;
  ScriptDate.now = noClock('Date.now()');
  def('Date', ScriptDate);
  Math.random = noClock('Math.random()');
})();
`;
