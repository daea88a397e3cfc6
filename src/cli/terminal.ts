import { AsyncLocalStorage } from 'node:async_hooks';
import type { Env } from '../config/env-reader.js';

/**
 * Where one CLI command reads its environment and writes its output: the process's own for the binary, buffers for
 * tests that run several commands at once in-process (each command's terminal follows its async calls).
 */
export interface Terminal {
  readonly env: Env;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** One command's run: its terminal and the exit code it asks for (e.g. `dev pay --wait` that timed out). */
export interface CommandRun {
  readonly terminal: Terminal;
  exitCode: number;
}

const current = new AsyncLocalStorage<CommandRun>();

export function withCommandRun<T>(run: CommandRun, work: () => Promise<T>): Promise<T> {
  return current.run(run, work);
}

/** The running command's run (every command runs inside runCli). */
export function commandRun(): CommandRun {
  const run = current.getStore();
  if (!run) throw new Error('no kassa command is running');
  return run;
}

/**
 * Stops following commands through async calls once the binary's one command returned: an AsyncLocalStorage left on
 * makes Node run a hook on every promise `serve` makes (docs/benchmarks.md).
 */
export function forgetCommandRuns(): void {
  current.disable();
}

export function terminal(): Terminal {
  return commandRun().terminal;
}
