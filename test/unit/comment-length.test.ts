import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sourceComments } from '../support/source-comments.js';

/**
 * A comment says why, or states the rule, in two lines at most; history belongs in commits and
 * docs/decisions, so no comment names a review or a date.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CODE_DIRS = ['src', 'web'];
const CODE_FILE = /\.(?:ts|mts|js|mjs|cjs|css|html)$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'generated']);
const MAX_LINES = 2;

/**
 * Files still being rewritten elsewhere that have such comments: a ratchet, so a file that no
 * longer needs its place here fails the test until it is taken off.
 */
const NOT_YET_SHORT = new Set<string>([]);

/** Tool directives, not prose: they neither count as text nor join a run of `//` lines. */
const DIRECTIVE = /^\/\/\s*(?:@ts-|eslint-|prettier-ignore)/;
/** A section heading (`// ---- Rendering ----`) stands alone: it does not join the comment below it. */
const HEADING = /^\/\/ -{2,} .+ -{2,}$/;
const HISTORY = [
  { pattern: /\breview(?:s|ed|er|ers)?\b/i, what: 'names a review' },
  { pattern: /\b\d{4}-\d{2}-\d{2}\b/, what: 'names a date' },
];

interface Comment {
  readonly line: number;
  /** Its lines of prose, delimiters and `*` margins taken off. */
  readonly text: string[];
}

/** JSDoc tags that type a script (web/ is type-checked through them): their lines are types, not prose. */
const TYPE_TAG = /^@(?:param|returns?|typedef|property|prop|template|type|callback|this|satisfies|overload|import)\b/;

function proseLines(raw: string): string[] {
  let inTypeTag = false;
  return raw
    .split('\n')
    .map((line) => line.trim().replace(/^\*(?!\/)\s?/, ''))
    .filter((line) => {
      if (line.startsWith('@')) inTypeTag = TYPE_TAG.test(line);
      return !inTypeTag && line.trim() !== '';
    });
}

interface Run {
  readonly line: number;
  last: number;
  readonly ownLine: boolean;
  readonly text: string[];
}

/** The comments of a file, a run of `//` lines on lines of their own read as one comment. */
function comments(file: string, source: string): Comment[] {
  const lines = source.split('\n');
  const found: Comment[] = [];
  let run: Run | null = null;
  const close = () => {
    if (run) found.push({ line: run.line, text: run.text });
    run = null;
  };
  for (const { text, line } of sourceComments(file, source)) {
    if (text.startsWith('//')) {
      if (DIRECTIVE.test(text)) {
        close();
        continue;
      }
      if (HEADING.test(text.trim())) {
        close();
        found.push({ line, text: [text] });
        continue;
      }
      const ownLine = lines[line - 1]!.trim() === text.trim();
      const prose = text.replace(/^\/\/+\s?/, '').trimEnd();
      const current = run as Run | null;
      if (current && current.ownLine && ownLine && current.last === line - 1) {
        current.last = line;
        if (prose.trim() !== '') current.text.push(prose);
        continue;
      }
      close();
      run = { line, last: line, ownLine, text: prose.trim() === '' ? [] : [prose] };
      continue;
    }
    close();
    const body = text.replace(/^(?:\/\*+|<!--)/, '').replace(/(?:\*+\/|-->)$/, '');
    found.push({ line, text: proseLines(body) });
  }
  close();
  return found.sort((a, b) => a.line - b.line);
}

/** What is wrong with the comments of `file`: each as `file:line why`. */
function commentProblems(file: string, source: string): string[] {
  return comments(file, source).flatMap(({ line, text }) => {
    const at = `${file}:${line}`;
    const problems = text.length > MAX_LINES ? [`${at} has ${text.length} lines of text`] : [];
    const joined = text.join(' ');
    for (const { pattern, what } of HISTORY) if (pattern.test(joined)) problems.push(`${at} ${what}`);
    return problems;
  });
}

function filesUnder(dir: string): string[] {
  if (!existsSync(path.join(ROOT, dir))) return [];
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : filesUnder(relative);
    return CODE_FILE.test(relative) ? [relative] : [];
  });
}

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('comments in src/ and web/', () => {
  it('say why in two lines at most and name no review or date', () => {
    const files = CODE_DIRS.flatMap(filesUnder);
    expect(files.length).toBeGreaterThan(100);
    const problems = files
      .filter((file) => !NOT_YET_SHORT.has(file))
      .flatMap((file) => commentProblems(file, read(file)));
    expect(problems, 'shorten these to the rule and its why; history goes to commits and docs/decisions').toEqual([]);
  });

  it('list only files that still have such a comment', () => {
    const clean = [...NOT_YET_SHORT].filter(
      (file) => !existsSync(path.join(ROOT, file)) || commentProblems(file, read(file)).length === 0,
    );
    expect(clean, 'take these off NOT_YET_SHORT: their comments are short now (or they are gone)').toEqual([]);
  });

  it('catch a long comment, a run of `//` lines, a review and a date, and only in comments', () => {
    const source = [
      '/**',
      ' * One line of why.',
      ' * A second line.',
      ' * A third line.',
      ' */',
      'const a = 1; // Short.',
      '// One.',
      '// Two.',
      '//',
      '// Three.',
      "const review = '2026-11-28'; // @ts-expect-error a directive",
      '/** Found by a review, 2026-11-28. */',
      'const b = `// not a comment ${a}`;',
      '/* One. */ // Two, on the same line.',
      '// Three, after a trailing comment.',
      'const c = 2; // A trailing comment',
      'const d = 3; // beside another.',
      '/**',
      ' * What and why, in two lines,',
      ' * the types below not counted.',
      ' * @param {string} text',
      ' * @returns {number}',
      ' * @remarks A third line of prose.',
      ' */',
      '// ---- A section ----',
      '// One.',
      '// Two.',
    ].join('\n');
    expect(commentProblems('src/example.ts', source)).toEqual([
      'src/example.ts:1 has 3 lines of text',
      'src/example.ts:7 has 3 lines of text',
      'src/example.ts:12 names a review',
      'src/example.ts:12 names a date',
      'src/example.ts:18 has 3 lines of text',
    ]);
    const html = '<!--\n  One.\n  Two.\n  Three.\n-->\n<p>2026-11-28</p>';
    expect(commentProblems('web/x.html', html)).toEqual(['web/x.html:1 has 3 lines of text']);
    expect(commentProblems('web/x.css', '/* A code review */\n.a { color: red; }')).toEqual([
      'web/x.css:1 names a review',
    ]);
  });
});
