import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findChromium, launchBrowser, type TestBrowser } from '../support/browser.js';

// The browser tests must pass on a machine with no system Chromium (`npm install && npm test`).
describe('the Chromium the browser tests use', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'kassa-browser-choice-'));
  let browser: TestBrowser | undefined;
  afterAll(async () => {
    await browser?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('takes KASSA_CHROMIUM_PATH first, and refuses one that does not exist instead of silently using another', async () => {
    const fake = join(scratch, 'my-chromium');
    writeFileSync(fake, '');
    await expect(findChromium({ KASSA_CHROMIUM_PATH: fake }, [])).resolves.toEqual({
      path: fake,
      source: 'KASSA_CHROMIUM_PATH',
    });
    await expect(findChromium({ KASSA_CHROMIUM_PATH: join(scratch, 'missing') })).rejects.toThrow(
      /KASSA_CHROMIUM_PATH is set to .*missing, which does not exist/,
    );
  });

  it('prefers a system Chromium to the bundled one', async () => {
    const system = join(scratch, 'system-chromium');
    writeFileSync(system, '');
    await expect(findChromium({}, [join(scratch, 'absent'), system])).resolves.toEqual({
      path: system,
      source: 'system',
    });
  });

  it(
    'falls back to the Chromium inside @sparticuz/chromium, which starts headless and renders a page',
    { timeout: 120_000 },
    async () => {
      const choice = await findChromium({}, []);
      expect(choice.source).toBe('@sparticuz/chromium');
      browser = await launchBrowser({ width: 400, height: 300 }, choice);
      // Two pages at once: the package's own `--single-process` flag would not allow this.
      const [first, second] = await Promise.all([browser.context.newPage(), browser.context.newPage()]);
      await first.setContent('<h1 id="t">bundled</h1><script>document.title = "scripts run"</script>');
      await second.setContent('<p>second page</p>');
      expect(await first.title()).toBe('scripts run');
      expect(await first.locator('#t').innerText()).toBe('bundled');
      expect(await second.locator('p').innerText()).toBe('second page');
    },
  );
});
