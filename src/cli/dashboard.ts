// `overseer dashboard [--open] [--revoke]`: a one-time login link for the dashboard the running
// hub serves (src/web). The link carries a code valid once for 60 s; the hub trades it for a
// session cookie. `--revoke` ends every dashboard session (the hub takes a new key).
import { execFile } from 'node:child_process';
import { CliError } from './errors.js';

/** A program that opens URLs on this system, if any. */
function opener(): string | undefined {
  return process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? undefined : 'xdg-open';
}

export async function runDashboard(o: { open?: boolean; revoke?: boolean; json?: boolean }): Promise<void> {
  const [{ loadConfig }, { requestsClient, HubUnavailableError }] = await Promise.all([import('../config.js'), import('../approvals/client.js')]);
  let api;
  try {
    api = requestsClient(loadConfig().home);
  } catch (err) {
    throw new CliError(err instanceof HubUnavailableError ? err.message.replace('requests are answered through the running hub', 'the dashboard is served by the running hub') : (err as Error).message);
  }
  if (o.revoke) {
    const r = await api.post('/api/web/revoke', {});
    if (r.status !== 200) throw new CliError(String(r.body?.error?.message ?? `the hub answered HTTP ${r.status}`));
    process.stdout.write(o.json ? `${JSON.stringify(r.body)}\n` : 'Every dashboard session has ended; run overseer dashboard for a new link.\n');
    return;
  }
  const r = await api.post('/api/web/login-code', {});
  if (r.status !== 200) throw new CliError(String(r.body?.error?.message ?? `the hub answered HTTP ${r.status}`));
  const { url, expires_at } = r.body as { url: string; expires_at: string };
  if (o.json) process.stdout.write(`${JSON.stringify(r.body)}\n`);
  else process.stdout.write(`${url}\n(one use, until ${expires_at.slice(11, 19)} UTC; the browser then stays logged in for 24 h)\n`);
  if (o.open) {
    const bin = opener();
    if (!bin) { process.stderr.write('overseer: no way to open a browser here: open the link yourself\n'); return; }
    execFile(bin, [url], { timeout: 10_000 }, (err) => { if (err) process.stderr.write(`overseer: could not open a browser (${err.message}): open the link yourself\n`); }).unref();
  }
}
