import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The import graph of the TypeScript sources, read with a scanner rather than the compiler:
 * TypeScript 7 has no JavaScript API, and the layering rules need only who imports what.
 * Every form counts — `import`, `import type`, `export … from`, `import '…'` and `import('…')`
 * — because a type-only import still ties a layer to another's vocabulary.
 */

/** One import: the file that has it (repository-relative, `/` separators) and what it names. */
export interface ImportEdge {
  readonly from: string;
  /** A repository-relative `.ts` path for a relative import; the package specifier otherwise (`node:dns`). */
  readonly to: string;
  readonly line: number;
  /** `import type …` or `export type … from`: a contract, gone at run time. */
  readonly typeOnly: boolean;
}

// Comments are blanked first (keeping line breaks) so an example in a comment is not an import.
const COMMENTS = /\/\*[\s\S]*?\*\/|(^|[^:'"`\\])\/\/[^\n]*/g;
const SPECIFIERS = [
  /\bimport\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
  /\bexport\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s*from\s*['"]([^'"]+)['"]/g,
  /\bimport\s*['"]([^'"]+)['"]/g,
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** The specifiers `source` imports, with their line numbers. */
export function importSpecifiers(source: string): Array<{ specifier: string; line: number; typeOnly: boolean }> {
  const blank = (match: string, lead = '') => lead + match.slice(lead.length).replace(/[^\n]/g, ' ');
  const code = source.replace(COMMENTS, blank);
  const found: Array<{ specifier: string; line: number; at: number; typeOnly: boolean }> = [];
  for (const pattern of SPECIFIERS) {
    for (const match of code.matchAll(pattern)) {
      const at = match.index + match[0].lastIndexOf(match[1]!);
      const typeOnly = /^(?:import|export)\s+type\b/.test(match[0]);
      found.push({ specifier: match[1]!, line: code.slice(0, at).split('\n').length, at, typeOnly });
    }
  }
  return found.sort((a, b) => a.at - b.at).map(({ specifier, line, typeOnly }) => ({ specifier, line, typeOnly }));
}

/** Every `.ts` file under `dir` (repository-relative), generated code left out. */
export function typescriptFiles(root: string, dir: string, skip: readonly string[] = []): string[] {
  const files: string[] = [];
  const walk = (relative: string) => {
    if (skip.includes(relative)) return;
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(child);
    }
  };
  walk(dir);
  return files.sort();
}

/** `./x.js` from `src/a/b.ts` → `src/a/x.ts`; a package specifier stays as it is. */
export function resolveSpecifier(from: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  return target.replace(/\.js$/, '.ts');
}

/** The edges of every file in `files`, read from disk under `root`. */
export function importGraph(root: string, files: readonly string[]): ImportEdge[] {
  return files.flatMap((from) => {
    const specifiers = importSpecifiers(readFileSync(path.join(root, from), 'utf8'));
    return specifiers.map(({ specifier, line, typeOnly }) => ({
      from,
      to: resolveSpecifier(from, specifier),
      line,
      typeOnly,
    }));
  });
}

/** The import cycles among `files` (each once, as the list of files around it), over `edges`. */
export function importCycles(files: readonly string[], edges: readonly ImportEdge[]): string[][] {
  const inside = new Set(files);
  const next = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const edge of edges) if (inside.has(edge.from) && inside.has(edge.to)) next.get(edge.from)!.push(edge.to);
  // Tarjan's strongly connected components: a component of more than one file (or a file importing itself) is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (file: string) => {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const target of next.get(file)!) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || next.get(file)!.includes(file)) cycles.push(component.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return cycles;
}
