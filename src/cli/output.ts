import { DomainError } from '../domain/errors.js';
import { ConfigError } from '../config.js';

/** One JSON object per command with --json, so other tools can parse it. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function printLine(text: string): void {
  process.stdout.write(text + '\n');
}

/** Readable failure for an operator: the message, never a stack, and a non-zero exit. */
export function reportFailure(error: unknown): never {
  if (error instanceof DomainError || error instanceof ConfigError) {
    process.stderr.write(`kassa: ${error.message}\n`);
    process.exit(error instanceof DomainError && error.code === 'not_found' ? 4 : 2);
  }
  process.stderr.write(`kassa: ${(error as Error)?.message ?? String(error)}\n`);
  process.exit(1);
}
