import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/**
 * A real browser for the hosted checkout page's tests: Debian's chromium driven by
 * playwright-core (which downloads nothing). Missing chromium fails the test with
 * the way to install it; it never skips.
 */
export const CHROMIUM_PATH = process.env.KASSA_CHROMIUM_PATH ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Chromium with a fresh temporary profile, removed on close. */
export async function launchBrowser(viewport = { width: 1024, height: 900 }): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}: the checkout page's browser test needs it. ` +
        'Install it with `apt-get install -y chromium` (Debian), or set KASSA_CHROMIUM_PATH.',
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'kassa-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
    viewport,
    timeout: 20_000,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
