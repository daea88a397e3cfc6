import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Milliseconds each file took in a full run (`project:path`), refreshed by hand from a CI log. */
const durations: Record<string, number> = JSON.parse(
  readFileSync(new URL('../file-durations.json', import.meta.url), 'utf8'),
);
/** A file not timed yet counts as a middling one. */
const UNKNOWN_MS = 10_000;

/**
 * Longest files first, so the last files to start are short ones and three workers end close together (a fresh clone
 * has no vitest cache, whose order would be alphabetical).
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const took = (file: TestSpecification) =>
      durations[`${file.project.name}:${relative(process.cwd(), file.moduleId)}`] ?? UNKNOWN_MS;
    return [...files].sort((a, b) => took(b) - took(a));
  }
}
