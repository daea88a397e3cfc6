import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph, importSpecifiers, resolveSpecifier } from '../support/import-graph.js';
import { typescriptFiles } from '../support/import-graph.js';
import type { ImportEdge } from '../support/import-graph.js';

/**
 * The layering of docs/decisions/0018 and the areas of docs/architecture.md, checked on every `npm test`: the domain
 * is a leaf, the transports never reach the generated Prisma client, and areas import only the areas below them.
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
  {
    name: 'src/graphql and src/http do not import src/rest (shared HTTP helpers live in src/http)',
    from: under('src/graphql', 'src/http'),
    forbidden: under('src/rest'),
  },
];

/** The areas of src/domain and src/db, lowest first: an area imports values only from itself and the ones before it. */
export const AREAS = [
  'shared',
  'organisations',
  'rates',
  'sessions',
  'payments',
  'payment-rules',
  'payment-links',
  'refunds',
  'webhooks',
  'dashboard',
] as const;

/** `src/domain/payments/x.ts` → { layer: 'src/domain', area: 'payments' }; files outside an area → null. */
function areaOf(file: string): { layer: string; area: string } | null {
  const match = /^(src\/domain|src\/db)\/([^/]+)\/[^/]+\.ts$/.exec(file);
  if (!match || !(AREAS as readonly string[]).includes(match[2]!)) return null;
  return { layer: match[1]!, area: match[2]! };
}

/**
 * Value imports that go up the order of AREAS, as "file:line → target". A type-only import may cross in any direction:
 * a session's view names the payment types it shows, and types are gone at run time.
 */
function areaViolations(edges: readonly ImportEdge[]): string[] {
  const rank = (area: string) => (AREAS as readonly string[]).indexOf(area);
  return edges.flatMap((edge) => {
    const from = areaOf(edge.from);
    const to = areaOf(edge.to);
    if (!from || !to || edge.typeOnly || rank(to.area) <= rank(from.area)) return [];
    return [`${edge.from}:${edge.line} → ${edge.to} (${from.area} may not import ${to.area})`];
  });
}

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

  it('keeps the areas of src/domain and src/db in their order, each folder at most 15 files', () => {
    expect(areaViolations(edges)).toEqual([]);
    const perFolder = new Map<string, number>();
    for (const file of sources.filter(under('src/domain', 'src/db')))
      perFolder.set(path.posix.dirname(file), (perFolder.get(path.posix.dirname(file)) ?? 0) + 1);
    expect([...perFolder].filter(([, count]) => count > 15)).toEqual([]);
    expect([...perFolder.keys()].length).toBeGreaterThan(8);
  });

  it('catches a value import up the order of areas, and lets a type-only one through', () => {
    const edge = { from: 'src/domain/sessions/a.ts', to: 'src/domain/payments/b.ts', line: 1 };
    expect(areaViolations([{ ...edge, typeOnly: false }])).toHaveLength(1);
    expect(areaViolations([{ ...edge, typeOnly: true }])).toEqual([]);
    expect(areaViolations([{ from: edge.to, to: edge.from, line: 1, typeOnly: false }])).toEqual([]);
    expect(violations([{ from: 'src/graphql/x.ts', to: 'src/rest/lane.ts', line: 1, typeOnly: false }])).toHaveLength(
      1,
    );
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
    const fromDomain = importSpecifiers(planted).map(({ specifier, line, typeOnly }) => ({
      from,
      line,
      typeOnly,
      to: resolveSpecifier(from, specifier),
    }));
    expect(violations(fromDomain)).toHaveLength(5);
    const prisma = 'src/generated/prisma/client.ts';
    expect(violations([{ from: 'src/graphql/x.resolver.ts', to: prisma, line: 1, typeOnly: false }])).toHaveLength(1);
    expect(violations([{ from: 'src/rest/x.routes.ts', to: '@prisma/client', line: 1, typeOnly: false }])).toHaveLength(
      1,
    );
    expect(violations([{ from: 'src/db/x.store.ts', to: prisma, line: 1, typeOnly: false }])).toEqual([]);
    const files = ['src/domain/a.ts', 'src/domain/b.ts'];
    const cycle = [
      { from: files[0]!, to: files[1]!, line: 1, typeOnly: false },
      { from: files[1]!, to: files[0]!, line: 1, typeOnly: false },
    ];
    expect(importCycles(files, cycle)).toEqual([files]);
  });

  it('ignores imports written in comments', () => {
    const source = "// import x from 'express';\n/* import('pg') */\nimport { a } from './a.js';";
    expect(importSpecifiers(source)).toEqual([{ specifier: './a.js', line: 3, typeOnly: false }]);
  });
});
