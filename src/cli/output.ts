import { DomainError } from '../domain/shared/errors.js';
import { CommanderError } from 'commander';
import { commandRun, terminal } from './terminal.js';

/** One JSON object per command with --json, so other tools can parse it. */
export function printJson(value: unknown): void {
  terminal().stdout(JSON.stringify(value, null, 2) + '\n');
}

export function printLine(text: string): void {
  terminal().stdout(text + '\n');
}

/** A readable problem on stderr that does not stop the command; it ends with `code`. */
export function printProblem(text: string, code: number): void {
  terminal().stderr(`kassa: ${text}\n`);
  commandRun().exitCode = code;
}

/**
 * Readable failure for an operator: the message, never a stack. Returns the exit code by kind: 4 not found, 2 invalid
 * input or refused operation, 1 bad configuration or anything unexpected.
 */
export function reportFailure(error: unknown): number {
  // Commander has already printed its own message (usage errors; --help exits 0).
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
  terminal().stderr(`kassa: ${(error as Error)?.message ?? String(error)}\n`);
  if (error instanceof DomainError) return error.code === 'not_found' ? 4 : error.code === 'unavailable' ? 1 : 2;
  return 1;
}
