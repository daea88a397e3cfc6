import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchors, headings, links, slug } from '../support/markdown-anchors.js';
import { sourceComments } from '../support/source-comments.js';

/**
 * Every citation resolves inside the repository: code comments cite docs/ (a file that exists,
 * and a heading of it when they name one), docs/decisions, CHANGELOG.md or a README heading
 * that exists — never the design notes, the interface spec or the style guide, which are not
 * in this repository — and every local link of the README and docs/ leads to a file and
 * heading that exist.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Where code comments are read (repository-relative). */
const CODE_DIRS = ['src', 'prisma', 'web', 'clients', 'bin', 'scripts', 'bench', 'test'];
const CODE_FILE = /\.(?:ts|mts|js|mjs|cjs|sql|css|html|prisma)$/;
/** Never read: dependencies, build output, and generated code (its comments come from elsewhere). */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'generated', '.artifacts']);
const GENERATED_FILES = new Set([
  // Its comments are the OpenAPI document's descriptions: program output, left as it is.
  'clients/typescript/src/types.ts',
]);
/**
 * Applied migrations never change: `kassa migrate` refuses a database whose applied migration's
 * checksum differs. Their README citations stay; each must still name a heading of docs/.
 */
const FROZEN = /^prisma\/migrations\//;
/** Documents outside this repository, which a comment must not send a reader to. */
const OUTSIDE = [/DESIGN\.md/, /\bspec §/i, /STYLE\.md/, /checkout-sessions-spec/];

function filesUnder(dir: string, accept: (file: string) => boolean): string[] {
  if (!existsSync(path.join(ROOT, dir))) return [];
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : filesUnder(relative, accept);
    return accept(relative) ? [relative] : [];
  });
}

const codeFiles = () =>
  CODE_DIRS.flatMap((dir) => filesUnder(dir, (file) => CODE_FILE.test(file) && !GENERATED_FILES.has(file)));
const markdownFiles = () => ['README.md', 'CHANGELOG.md', ...filesUnder('docs', (file) => file.endsWith('.md'))];
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

let docsHeadingsRead: string[] | null = null;
const docsHeadings = () =>
  (docsHeadingsRead ??= filesUnder('docs', (file) => file.endsWith('.md')).flatMap((file) => headings(read(file))));

/** `docs/decisions/0004` names the record whose file name starts with `0004-`. */
function resolveDocPath(docPath: string): string | null {
  if (existsSync(path.join(ROOT, docPath))) return docPath;
  const decision = /^docs\/decisions\/(\d{4})$/.exec(docPath);
  if (!decision) return null;
  const match = readdirSync(path.join(ROOT, 'docs/decisions')).find((name) => name.startsWith(`${decision[1]}-`));
  return match ? `docs/decisions/${match}` : null;
}

/** What is wrong with a reference to `file#anchor` (repository-relative), or null when it resolves. */
function problemWith(file: string, anchor: string | undefined): string | null {
  const absolute = path.resolve(ROOT, file);
  if (path.relative(ROOT, absolute).startsWith('..')) return `${file} is outside the repository`;
  if (!existsSync(absolute)) return `${file} does not exist`;
  if (anchor === undefined || anchor === '') return null;
  if (statSync(absolute).isDirectory() || !file.endsWith('.md')) return `${file} has no headings to link to`;
  return anchors(read(file)).has(decodeURIComponent(anchor)) ? null : `${file} has no heading #${anchor}`;
}

/** Every broken citation in the comments of `file`'s `source`. */
function citationProblems(file: string, source: string, readmeHeadings: readonly string[]): string[] {
  const problems: string[] = [];
  for (const comment of sourceComments(file, source)) {
    const at = `${file}:${comment.line}`;
    // One line: a citation may wrap onto the comment's next line (` * `, `// `, `-- `).
    const text = comment.text.replace(/\s*\n\s*(?:\*(?!\/)|\/\/|--)?\s*/g, ' ');
    for (const outside of OUTSIDE) {
      if (outside.test(text)) problems.push(`${at} cites ${outside.source.replace(/\\b|\\/g, '')}`);
    }
    for (const match of text.matchAll(/README "([^"]+)"/g)) {
      const known = FROZEN.test(file) ? docsHeadings() : readmeHeadings;
      if (!known.includes(match[1]!)) problems.push(`${at} cites README "${match[1]}", not a README heading`);
    }
    for (const match of text.matchAll(/\bdocs\/[\w./-]*[\w/](?:#[\w-]+)?/g)) {
      const [docPath, anchor] = match[0].split('#') as [string, string | undefined];
      const resolved = resolveDocPath(docPath.replace(/\/$/, ''));
      const problem = resolved === null ? `${docPath} does not exist` : problemWith(resolved, anchor);
      if (problem) problems.push(`${at} cites ${match[0]}: ${problem}`);
    }
  }
  return problems;
}

/** Every local link of a markdown file that does not resolve. */
function linkProblems(file: string, markdown: string): string[] {
  return links(markdown).flatMap(({ target, line }) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return []; // https:, mailto: …
    const [targetPath, anchor] = target.split('#') as [string, string | undefined];
    const linked =
      targetPath === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), targetPath));
    const problem = problemWith(linked, anchor);
    return problem ? [`${file}:${line} links ${target}: ${problem}`] : [];
  });
}

/**
 * Every citation in what integrators and operators read from the program itself: the GraphQL schema's descriptions
 * (Apollo Sandbox), the OpenAPI document's (its generated client types carry them) and the texts in src/ (CLI help,
 * metric help, start-up refusals).
 */
function outputCitationProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  for (const outside of [...OUTSIDE, /README "/]) {
    if (outside.test(text)) problems.push(`${file} cites ${outside.source.replace(/\\b|\\/g, '')}`);
  }
  for (const match of text.matchAll(/\bdocs\/[\w./-]*[\w/](?:#[\w-]+)?/g)) {
    const [docPath, anchor] = match[0].split('#') as [string, string | undefined];
    const resolved = resolveDocPath(docPath.replace(/\/$/, ''));
    const problem = resolved === null ? `${docPath} does not exist` : problemWith(resolved, anchor);
    if (problem) problems.push(`${file} cites ${match[0]}: ${problem}`);
  }
  return problems;
}

describe('citations in what the program shows', () => {
  it('the GraphQL schema, the OpenAPI-derived client types and the texts in src/ cite only docs/ that exist', () => {
    const files = [
      'schema.graphql',
      'clients/typescript/src/types.ts',
      ...filesUnder('src', (file) => file.endsWith('.ts')),
    ];
    expect(files.flatMap((file) => outputCitationProblems(file, read(file)))).toEqual([]);
    expect(outputCitationProblems('x.ts', "summary: 'Create (spec §4.1)', help: 'see README \"Rate limits\"'")).toEqual(
      ['x.ts cites spec §', 'x.ts cites README "'],
    );
    expect(outputCitationProblems('x.ts', "'docs/api/rest.md#no-such-heading'")).toEqual([
      'x.ts cites docs/api/rest.md#no-such-heading: docs/api/rest.md has no heading #no-such-heading',
    ]);
  });
});

describe('citations in code comments', () => {
  it('point inside the repository: docs/ files and headings, decisions, README headings that exist', () => {
    const readmeHeadings = headings(read('README.md'));
    const files = codeFiles();
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((file) => citationProblems(file, read(file), readmeHeadings))).toEqual([]);
  });

  it('catch a citation of DESIGN.md, the spec or a missing docs/ page, and only in comments', () => {
    const source = [
      '// Limits of DESIGN.md §4 "Create".',
      '/** The bind response (spec §2.6); see docs/api/rest.md#no-such-heading and docs/nowhere.md. */',
      "const description = 'Signed (spec §5)'; // docs/decisions/9999",
      'const ratio = a / b; // README "No such section"',
      'const pattern = /\\/\\/ spec §1/;',
      'const template = `${`// DESIGN.md`}`;',
    ].join('\n');
    expect(citationProblems('src/example.ts', source, ['Quick tour'])).toEqual([
      'src/example.ts:1 cites DESIGN.md',
      'src/example.ts:2 cites spec §',
      'src/example.ts:2 cites docs/api/rest.md#no-such-heading: docs/api/rest.md has no heading #no-such-heading',
      'src/example.ts:2 cites docs/nowhere.md: docs/nowhere.md does not exist',
      'src/example.ts:3 cites docs/decisions/9999: docs/decisions/9999 does not exist',
      'src/example.ts:4 cites README "No such section", not a README heading',
    ]);
    expect(citationProblems('prisma/migrations/x/migration.sql', "SELECT '-- spec §7';\n-- DESIGN.md §3", [])).toEqual([
      'prisma/migrations/x/migration.sql:2 cites DESIGN.md',
    ]);
  });
});

describe('links of the README and docs/', () => {
  it('lead to files inside the repository and to headings that exist', () => {
    const files = markdownFiles();
    expect(files).toContain('docs/README.md');
    expect(files.flatMap((file) => linkProblems(file, read(file)))).toEqual([]);
  });

  it('take anchors as GitHub makes them', () => {
    expect(slug('Create: rules and limits')).toBe('create-rules-and-limits');
    expect(slug('`kassa dev pay` and the sandbox')).toBe('kassa-dev-pay-and-the-sandbox');
    expect(slug("Rule 5: amounts are in the token's own units")).toBe('rule-5-amounts-are-in-the-tokens-own-units');
    expect([...anchors('# A\n## B\n```\n## C\n```\n## B\n')]).toEqual(['a', 'b', 'b-1']);
    expect(
      linkProblems('docs/x.md', '[up](../README.md#quick-tour) [out](../../shared/spec/x.md) `[no](nowhere.md)`'),
    ).toEqual(['docs/x.md:1 links ../../shared/spec/x.md: ../shared/spec/x.md is outside the repository']);
    expect(linkProblems('docs/x.md', 'A [link that\nwraps](missing.md#top).\n```\n[in code](nowhere.md)\n```')).toEqual(
      ['docs/x.md:2 links missing.md#top: docs/missing.md does not exist'],
    );
  });
});
