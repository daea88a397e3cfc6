import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PAGE_SCRIPTS, WEB_DIR } from '../../src/rest/hosted-page.js';

// docs/hosted-pages.md#the-page-scripts: the pages' scripts are ES modules served as written. The server serves
// exactly the modules the pages import, each page preloads every module below its entry (one round trip instead of
// one per level of imports), and every module is type-checked (web/tsconfig.json, `// @ts-check`).

const read = (file: string) => readFileSync(`${WEB_DIR}${file}`, 'utf8');

/** The files a module imports, by their static `import … from './x.js'` (the pages import nothing else). */
function importsOf(file: string): string[] {
  return [...read(file).matchAll(/^import\s[^;]*?\sfrom\s'\.\/([\w-]+\.js)';$/gm)].map((match) => match[1]!);
}

/** Every module the entry reaches, the entry first. */
function graphOf(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    importsOf(file).forEach(visit);
  };
  visit(entry);
  return [...seen];
}

const PAGES = [
  ['pay.html', 'pay.js'],
  ['link.html', 'link.js'],
  ['refund.html', 'refund.js'],
] as const;

describe('the hosted pages’ modules', () => {
  it.each(PAGES)('%s loads %s as a module and preloads every module it imports', (page, entry) => {
    const html = read(page);
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((match) => match[1]!);
    expect(scripts.filter((attributes) => !/type="application\/json"/.test(attributes))).toEqual([
      ` type="module" src="/pay/assets/${entry}"`,
    ]);
    const preloaded = [...html.matchAll(/<link rel="modulepreload" href="\/pay\/assets\/([\w-]+\.js)">/g)];
    const modules = graphOf(entry);
    expect(modules.length).toBeGreaterThan(1);
    expect(preloaded.map((match) => match[1]).sort()).toEqual(modules.slice(1).sort());
  });

  it('serves exactly the modules the pages reach, and every one of them is type-checked', () => {
    const reached = new Set(PAGES.flatMap(([, entry]) => graphOf(entry)));
    expect([...PAGE_SCRIPTS].sort()).toEqual([...reached].sort());
    const onDisk = readdirSync(WEB_DIR).filter((name) => name.endsWith('.js'));
    expect(onDisk.sort()).toEqual([...PAGE_SCRIPTS].sort());
    for (const file of onDisk) expect(read(file).startsWith('// @ts-check\n'), file).toBe(true);
    const config = JSON.parse(read('tsconfig.json'));
    expect(config.compilerOptions).toMatchObject({ checkJs: true, strict: true, noEmit: true });
  });
});
