import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph, importSpecifiers, resolveSpecifier } from '../support/import-graph.js';
import { typescriptFiles } from '../support/import-graph.js';
import type { ImportEdge } from '../support/import-graph.js';

/**
 * The layering of docs/decisions/0018, checked on every `npm test`: the domain is a leaf (it
 * defines ports; the outer layers implement them), the transports never reach the generated
 * Prisma client (src/db is the only code that does), and the domain has no import cycle.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const GENERATED = 'src/generated';

interface Rule {
  readonly name: string;
  /** The files the rule is about (repository-relative). */
  readonly from: (file: string) => boolean;
  /** An import target (repository-relative `.ts` path or package specifier) they must not reach. */
  readonly forbidden: (target: string) => boolean;
}

const under =
  (...dirs: string[]) =>
  (target: string) =>
    dirs.some((dir) => target === dir || target.startsWith(`${dir}/`));
const oneOf =
  (...names: string[]) =>
  (target: string) =>
    names.includes(target);
/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
const packageOf = (target: string) =>
  target
    .split('/')
    .slice(0, target.startsWith('@') ? 2 : 1)
    .join('/');

const RULES: readonly Rule[] = [
  {
    name: 'src/domain imports no outer layer, framework, database driver, DNS or HTTP server',
    from: under('src/domain'),
    forbidden: (target) =>
      under('src/rest', 'src/graphql', 'src/db', 'src/chain')(target) ||
      under('src/webhooks', 'src/rates', 'src/cli', GENERATED)(target) ||
      target === 'src/config.ts' ||
      target.startsWith('src/config/') ||
      oneOf('express', 'type-graphql', 'graphql', 'pg', '@prisma/client', '@prisma/adapter-pg')(packageOf(target)) ||
      packageOf(target).startsWith('@apollo/') ||
      oneOf('node:dns', 'node:dns/promises', 'dns', 'dns/promises', 'node:http', 'http')(target),
  },
  {
    name: 'src/rest and src/graphql do not import the generated Prisma client',
    from: under('src/rest', 'src/graphql'),
    forbidden: (target) => under(GENERATED)(target) || oneOf('@prisma/client')(packageOf(target)),
  },
];

/** The imports that break a rule, as "file:line → target (rule)". */
function violations(edges: readonly ImportEdge[], rules: readonly Rule[] = RULES): string[] {
  return edges.flatMap((edge) => {
    const broken = rules.filter((rule) => rule.from(edge.from) && rule.forbidden(edge.to));
    return broken.map((rule) => `${edge.from}:${edge.line} → ${edge.to} (${rule.name})`);
  });
}

describe('architecture', () => {
  const sources = typescriptFiles(ROOT, 'src', [GENERATED]);
  const edges = importGraph(ROOT, sources);

  it('reads the import graph of src/', () => {
    // A scanner that found nothing would pass every rule: make sure it sees the wiring.
    expect(sources.length).toBeGreaterThan(100);
    expect(edges.filter((edge) => edge.from === 'src/app.ts').length).toBeGreaterThan(5);
    for (const edge of edges) {
      if (!edge.to.startsWith('src/') || under(GENERATED)(edge.to)) continue;
      expect(sources, `${edge.from}:${edge.line} imports a file that does not exist`).toContain(edge.to);
    }
  });

  it('keeps the layers apart', () => {
    expect(violations(edges)).toEqual([]);
  });

  it('has no import cycle inside src/domain', () => {
    const domain = sources.filter(under('src/domain'));
    expect(importCycles(domain, edges)).toEqual([]);
  });

  it('catches a planted violation of each rule and a planted cycle', () => {
    const planted = [
      "import type { RatesProvider } from '../rates/rates-source.js';",
      "import { lookup } from 'node:dns/promises';",
      "import express from 'express';",
      "export type { WebhookConfig } from '../config.js';",
      "const prisma = await import('../generated/prisma/client.js');",
    ].join('\n');
    const from = 'src/domain/x.ts';
    const fromDomain = importSpecifiers(planted).map(({ specifier, line }) => ({
      from,
      line,
      to: resolveSpecifier(from, specifier),
    }));
    expect(violations(fromDomain)).toHaveLength(5);
    const prisma = 'src/generated/prisma/client.ts';
    expect(violations([{ from: 'src/graphql/x.resolver.ts', to: prisma, line: 1 }])).toHaveLength(1);
    expect(violations([{ from: 'src/rest/x.routes.ts', to: '@prisma/client', line: 1 }])).toHaveLength(1);
    expect(violations([{ from: 'src/db/x.store.ts', to: prisma, line: 1 }])).toEqual([]);
    const files = ['src/domain/a.ts', 'src/domain/b.ts'];
    const cycle = [
      { from: files[0]!, to: files[1]!, line: 1 },
      { from: files[1]!, to: files[0]!, line: 1 },
    ];
    expect(importCycles(files, cycle)).toEqual([files]);
  });

  it('ignores imports written in comments', () => {
    const source = "// import x from 'express';\n/* import('pg') */\nimport { a } from './a.js';";
    expect(importSpecifiers(source)).toEqual([{ specifier: './a.js', line: 3 }]);
  });
});
