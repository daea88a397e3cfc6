/**
 * Headings, anchors and links of a markdown file, as GitHub renders them: enough to tell
 * whether `docs/api/rest.md#bind-rules` or `[Rate limits](#rate-limits)` leads somewhere.
 */

/** The lines of `markdown` outside fenced code blocks, with their line numbers (1-based). */
export function proseLines(markdown: string): Array<{ text: string; line: number }> {
  const lines: Array<{ text: string; line: number }> = [];
  let fence: string | null = null;
  markdown.split('\n').forEach((text, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      return;
    }
    if (fence === null) lines.push({ text, line: index + 1 });
  });
  return lines;
}

/** The text of the ATX headings (`## Text`), in order, with their inline links reduced to text. */
export function headings(markdown: string): string[] {
  return proseLines(markdown)
    .map(({ text }) => /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1])
    .filter((text): text is string => text !== undefined)
    .map((text) => text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'));
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of the file: each heading's slug, a repeated one with `-1`, `-2`, … as GitHub does. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const heading of headings(markdown)) {
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The link targets of the prose (inline links and images; code spans left out), with their lines. */
export function links(markdown: string): Array<{ target: string; line: number }> {
  // Fenced blocks become empty lines, so a link's text may wrap onto the next line and line numbers stay right.
  const prose = proseLines(markdown);
  const text = markdown
    .split('\n')
    .map((line, index) => (prose.some((p) => p.line === index + 1) ? line.replace(/`[^`]*`/g, '') : ''))
    .join('\n');
  const found: Array<{ target: string; line: number }> = [];
  for (const match of text.matchAll(/!?\[(?:[^\]]|\][^(])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    found.push({ target: match[1]!, line: text.slice(0, match.index + match[0].length).split('\n').length });
  }
  return found;
}
