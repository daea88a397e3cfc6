import { DomainError } from '../domain/errors.js';
import { CommanderError } from 'commander';

/** One JSON object per command with --json, so other tools can parse it. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function printLine(text: string): void {
  process.stdout.write(text + '\n');
}

/**
 * Readable failure for an operator: the message, never a stack, and an exit
 * code by kind: 4 not found; 2 invalid input or a refused operation; 1 bad
 * configuration or anything unexpected.
 */
export function reportFailure(error: unknown): never {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  process.stderr.write(`kassa: ${(error as Error)?.message ?? String(error)}\n`);
  if (error instanceof DomainError) process.exit(error.code === 'not_found' ? 4 : error.code === 'unavailable' ? 1 : 2);
  process.exit(1);
}
