import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { runCli } from '../../src/cli/program.js';
import { PACKAGE_ROOT } from '../../src/config.js';

/**
 * Runs `kassa …` two ways:
 * - `runKassa` / `startKassaServer`: `node bin/kassa.js …` as a real child process, the way an
 *   operator does, running the compiled code in dist/ (built by `npm install` through the
 *   "prepare" script, or by `npm run build`). For the binary itself, exit codes and signals.
 * - `runKassaInProcess`: the same command (src/cli/program.ts, the code the binary runs) in
 *   this process, with an environment and output of its own: no Node start-up and module
 *   loading per command (about a second each), so most CLI tests use it.
 */

export const KASSA_BIN = path.join(PACKAGE_ROOT, 'bin/kassa.js');
const DIST_ENTRY = path.join(PACKAGE_ROOT, 'dist/cli/main.js');

/** Fails a test file at once, with the fix, when dist/ was never built. */
export function assertCliBuilt(): void {
  if (!existsSync(DIST_ENTRY)) {
    throw new Error(
      `${DIST_ENTRY} is missing: the kassa CLI runs compiled code. Run \`npm run build\` (npm install does it through "prepare") before these tests.`,
    );
  }
}

/**
 * A child's environment built from nothing but PATH and HOME, so a developer's
 * DATABASE_URL or KASSA_* (or vitest's NODE_ENV=test) never leaks into a CLI test.
 */
export function cleanEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
  for (const [name, value] of Object.entries(env)) if (value !== undefined) base[name] = value;
  return base;
}

export interface KassaRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

const children = new Set<ChildProcess>();

export interface RunOptions {
  readonly timeoutMs?: number;
  readonly cwd?: string;
}

/** Runs one CLI command to its end and returns its exit and output (never throws on a non-zero exit). */
export function runKassa(
  args: readonly string[],
  env: Record<string, string | undefined>,
  options: RunOptions = {},
): Promise<KassaRun> {
  assertCliBuilt();
  const child = spawn(process.execPath, [KASSA_BIN, ...args], {
    env: cleanEnv(env),
    cwd: options.cwd ?? PACKAGE_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `kassa ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * Runs one CLI command in this process (see above) with the same clean environment as a child
 * would get; the exit code is what the binary would exit with.
 */
export async function runKassaInProcess(
  args: readonly string[],
  env: Record<string, string | undefined>,
): Promise<KassaRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    env: cleanEnv(env),
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, signal: null, stdout, stderr };
}

/** Parses the one JSON document a `--json` command prints, with its output in the error when it is not JSON. */
export function parseJsonOutput<T = Record<string, unknown>>(run: KassaRun): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(
      `expected one JSON document on stdout (exit ${run.code})\nstdout: ${run.stdout}\nstderr: ${run.stderr}`,
    );
  }
}

/** A port nobody listens on right now (the OS picks it; it is released before Kassa binds it). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface KassaServer {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  stdout(): string;
  stderr(): string;
  /** Resolves when /ready answers 200; rejects with the server's output if it exits first or takes too long. */
  ready(timeoutMs?: number): Promise<void>;
  /** The exit of the process (resolves once it has ended). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node bin/kassa.js serve` on a free port (PORT in `env` wins). */
export async function startKassaServer(env: Record<string, string | undefined>): Promise<KassaServer> {
  assertCliBuilt();
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, [KASSA_BIN, 'serve'], {
    env: cleanEnv({ ...env, PORT: String(port) }),
    cwd: PACKAGE_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let ended: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      children.delete(child);
      ended = { code, signal };
      resolve(ended);
    });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    child,
    port,
    url,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    async ready(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (ended)
          throw new Error(
            `kassa serve exited (${JSON.stringify(ended)}) before it was ready\nstdout: ${stdout}\nstderr: ${stderr}`,
          );
        const status = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(2_000) }).then(
          (response) => response.status,
          () => 0,
        );
        if (status === 200) return;
        if (Date.now() > deadline)
          throw new Error(`kassa serve was not ready within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop(graceMs = 10_000) {
      if (ended) return ended;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** Kills every child this file started that still runs (for afterAll/afterEach) and waits for them to end. */
export async function killAllKassaProcesses(): Promise<void> {
  const running = [...children];
  await Promise.all(
    running.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('close', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
        }),
    ),
  );
  children.clear();
}

/** A small valid create request (docs/api/rest.md#create-rules-and-limits). */
export const CHECKOUT_BODY = JSON.stringify({
  user: { id: 'customer-cli', email: 'payer@example.com' },
  items: [{ name: 'Coffee beans', quantity: 2, unit_price: 12.5 }],
  currency: 'USD',
});

/**
 * POST /checkout-sessions signed as a merchant does it (docs/api/rest.md#signing-a-merchant-call):
 * X-Service-Signature is the hex HMAC-SHA256 of `${timestamp}.${body}` computed here, independently
 * of Kassa's code.
 */
export async function signedCreate(
  baseUrl: string,
  credentials: { apiKey: string; apiSecret: string },
  body = CHECKOUT_BODY,
) {
  const timestamp = String(Date.now());
  const signature = createHmac('sha256', credentials.apiSecret).update(`${timestamp}.${body}`).digest('hex');
  const response = await fetch(`${baseUrl}/checkout-sessions`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Service-Key': credentials.apiKey,
      'X-Service-Timestamp': timestamp,
      'X-Service-Signature': signature,
    },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** True when `text` looks like a JavaScript stack trace. */
export function hasStackTrace(text: string): boolean {
  return /^\s+at .+(\(|:\d+:\d+)/m.test(text) || /node:internal|\.js:\d+:\d+/.test(text);
}
