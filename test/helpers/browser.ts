// A real headless Chromium for page tests: the one @sparticuz/chromium ships inside its npm
// package (unpacked on first use; no download, no system browser), driven by playwright-core.
// Not its Lambda flags (single process, web security off): a normal browser with its normal
// same-origin rules, kept off the network this machine does not have.
import chromium from '@sparticuz/chromium';
import { chromium as pw, type Browser } from 'playwright-core';

export async function launchBrowser(): Promise<Browser> {
  const executablePath = await chromium.executablePath();
  return pw.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--use-gl=angle', '--use-angle=swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--no-default-browser-check', '--no-pings', '--font-render-hinting=none'],
  });
}
