// The dashboard served by the hub (issue 11): its pages and assets, the session cookie that
// stands for the lead on /api/, and its own API. The hub wires `hooks` into its HTTP endpoint and
// `api` beside the floor and requests APIs.
import type { WebHooks } from '../server/http.js';
import type { HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import { WebAuth, webKey } from './auth.js';
import { isPage, loadAssets, servePage } from './pages.js';
import { webApi, type WebServices } from './api.js';

export interface Web {
  hooks: WebHooks;
  api: ReturnType<typeof webApi>;
  auth: WebAuth;
  close(): void;
}

export function createWeb(o: { ctx: HubContext; jobs: JobService; services: WebServices; packageRoot: string; port: () => number; url: () => string; version: string }): Web {
  const auth = new WebAuth(webKey(o.ctx.config.home), () => o.ctx.clock.now(), () => `overseer_${o.port()}`);
  const assets = loadAssets(o.packageRoot);
  const api = webApi({ ctx: o.ctx, jobs: o.jobs, services: o.services, auth, url: o.url, version: o.version, revoke: () => auth.rekey(webKey(o.ctx.config.home, true)) });
  return {
    auth,
    api,
    hooks: {
      isPage,
      page: (req, res, url) => servePage({ auth, assets }, req, res, url),
      cookieCaller: (req) => {
        const s = auth.session(req.headers.cookie);
        if (!s) return undefined;
        const given = req.headers['x-csrf-token'];
        return { caller: { role: 'lead' }, csrfOk: auth.csrfOk(s, Array.isArray(given) ? given[0] : given) };
      },
    },
    close: () => api.closeStreams(),
  };
}
