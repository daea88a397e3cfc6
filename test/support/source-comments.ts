/**
 * The comments of a source file, read with a small scanner (TypeScript 7 has no JavaScript API):
 * strings, template literals and regular expressions are stepped over, so a message or an
 * OpenAPI description is never taken for a comment. Enough for this repository's own code, not
 * a full JavaScript lexer.
 */

/** One comment: its text (delimiters included) and the line it starts on (1-based). */
export interface SourceComment {
  readonly text: string;
  readonly line: number;
}

/** The comments of `source`, by the syntax its file name implies (JS/TS, SQL, CSS, HTML, Prisma). */
export function sourceComments(file: string, source: string): SourceComment[] {
  if (file.endsWith('.sql')) return sqlComments(source);
  if (file.endsWith('.css')) return blockComments(source, '/*', '*/');
  if (file.endsWith('.html')) return blockComments(source, '<!--', '-->');
  return scriptComments(source);
}

const lineAt = (source: string, index: number) => source.slice(0, index).split('\n').length;

// After one of these (or a keyword below), a `/` starts a regular expression, not a division.
const BEFORE_REGEX = new Set('(,=:[!&|?{};+-*%<>~^'.split(''));
const KEYWORDS_BEFORE_REGEX = /\b(?:return|typeof|case|in|of|delete|void|throw|new|else|do|yield|await)$/;

/** JavaScript, TypeScript and Prisma schema comments: `//…` and `/* … *\/`. */
export function scriptComments(source: string): SourceComment[] {
  const comments: SourceComment[] = [];
  // Open template literals' `${` nesting: each entry is the brace depth inside that substitution.
  const templates: number[] = [];
  let previous = ''; // the last significant character of code, for the regex rule
  let index = 0;
  const push = (start: number, end: number) =>
    comments.push({ text: source.slice(start, end), line: lineAt(source, start) });

  const skipString = (quote: string) => {
    index += 1;
    while (index < source.length && source[index] !== quote && source[index] !== '\n') {
      index += source[index] === '\\' ? 2 : 1;
    }
    index += 1;
  };
  /** Skips template text up to its end (returns) or up to a `${` (pushes a substitution). */
  const skipTemplateText = () => {
    while (index < source.length) {
      const char = source[index];
      if (char === '\\') index += 2;
      else if (char === '`') {
        index += 1;
        return;
      } else if (char === '$' && source[index + 1] === '{') {
        index += 2;
        templates.push(0);
        return;
      } else index += 1;
    }
  };
  const skipRegex = () => {
    index += 1;
    let inClass = false;
    while (index < source.length && source[index] !== '\n') {
      const char = source[index];
      if (char === '\\') index += 2;
      else {
        index += 1;
        if (char === '[') inClass = true;
        else if (char === ']') inClass = false;
        else if (char === '/' && !inClass) break;
      }
    }
    while (/[a-z]/i.test(source[index] ?? '')) index += 1;
  };

  while (index < source.length) {
    const char = source[index]!;
    const next = source[index + 1];
    if (char === '/' && next === '/') {
      const end = source.indexOf('\n', index);
      push(index, end === -1 ? source.length : end);
      index = end === -1 ? source.length : end;
    } else if (char === '/' && next === '*') {
      const end = source.indexOf('*/', index + 2);
      const stop = end === -1 ? source.length : end + 2;
      push(index, stop);
      index = stop;
    } else if (char === '"' || char === "'") {
      skipString(char);
      previous = 'a';
    } else if (char === '`') {
      index += 1;
      skipTemplateText();
      previous = 'a';
    } else if (char === '/') {
      const before = source.slice(Math.max(0, index - 12), index).trimEnd();
      if (previous === '' || BEFORE_REGEX.has(previous) || KEYWORDS_BEFORE_REGEX.test(before)) {
        skipRegex();
        previous = 'a';
      } else {
        index += 1;
        previous = '/';
      }
    } else if (templates.length > 0 && (char === '{' || char === '}')) {
      const depth = templates.length - 1;
      if (char === '{') templates[depth] = templates[depth]! + 1;
      else if (templates[depth] === 0) {
        templates.pop();
        index += 1;
        skipTemplateText();
        previous = 'a';
        continue;
      } else templates[depth] = templates[depth]! - 1;
      index += 1;
      previous = char;
    } else {
      if (!/\s/.test(char)) previous = /[\w$)\]]/.test(char) ? 'a' : char;
      index += 1;
    }
  }
  return comments;
}

/** SQL comments: `-- …` and `/* … *\/`, outside single-quoted strings. */
export function sqlComments(source: string): SourceComment[] {
  const comments: SourceComment[] = [];
  let index = 0;
  while (index < source.length) {
    const char = source[index];
    if (char === "'") {
      const end = source.indexOf("'", index + 1);
      index = end === -1 ? source.length : end + 1;
    } else if (char === '-' && source[index + 1] === '-') {
      const end = source.indexOf('\n', index);
      const stop = end === -1 ? source.length : end;
      comments.push({ text: source.slice(index, stop), line: lineAt(source, index) });
      index = stop;
    } else if (char === '/' && source[index + 1] === '*') {
      const end = source.indexOf('*/', index + 2);
      const stop = end === -1 ? source.length : end + 2;
      comments.push({ text: source.slice(index, stop), line: lineAt(source, index) });
      index = stop;
    } else index += 1;
  }
  return comments;
}

function blockComments(source: string, open: string, close: string): SourceComment[] {
  const comments: SourceComment[] = [];
  let start = source.indexOf(open);
  while (start !== -1) {
    const end = source.indexOf(close, start + open.length);
    const stop = end === -1 ? source.length : end + close.length;
    comments.push({ text: source.slice(start, stop), line: lineAt(source, start) });
    start = source.indexOf(open, stop);
  }
  return comments;
}
