import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * The anvil binary from Foundry's linux-amd64 npm package, the only platform our registry carries; elsewhere install
 * `@foundry-rs/anvil-<os>-<arch>` yourself, or point KASSA_RPC_URLS_LOCAL at your own anvil.
 */
export function anvilBinaryPath(): string {
  const os = { linux: 'linux', darwin: 'darwin', win32: 'win32' }[process.platform as string];
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch as string];
  if (!os || !arch) throw new Error(`anvil is not packaged for ${process.platform}/${process.arch}`);
  const name = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  try {
    return require.resolve(`@foundry-rs/anvil-${os}-${arch}/bin/${name}`);
  } catch {
    throw new Error(
      `@foundry-rs/anvil-${os}-${arch} is not installed: \`npm install --no-save @foundry-rs/anvil-${os}-${arch}\`, ` +
        `or run your own anvil at the local RPC URL`,
    );
  }
}

export interface AnvilProcess {
  readonly url: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

export interface AnvilOptions {
  readonly host?: string;
  readonly port: number;
  readonly chainId?: number;
  /** Seconds between blocks; without it every transaction is mined at once (automine). */
  readonly blockTime?: number;
  /**
   * A file the chain is loaded from and saved to (on exit and every few seconds), so a
   * restarted sandbox is the same chain: same blocks, same hashes, same balances.
   */
  readonly stateFile?: string;
}

/** Starts a local EVM chain and waits until it answers JSON-RPC. */
export async function startAnvil(options: AnvilOptions): Promise<AnvilProcess> {
  const host = options.host ?? '127.0.0.1';
  const args = [
    '--host',
    host,
    '--port',
    String(options.port),
    '--chain-id',
    String(options.chainId ?? 31337),
    '--silent',
  ];
  if (options.blockTime) args.push('--block-time', String(options.blockTime));
  if (options.stateFile) args.push('--state', options.stateFile, '--state-interval', '5');
  const child = spawn(anvilBinaryPath(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  // A chain this process started never outlives it, however it ends (SIGTERM: anvil saves its state first).
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);
  child.once('exit', () => process.removeListener('exit', killOnExit));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${options.port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 20_000;
  for (;;) {
    const early = await Promise.race([
      exited,
      new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 100)),
    ]);
    if (early !== 'running') throw new Error(`anvil exited with code ${early}: ${stderr.trim()}`);
    if (await answers(url)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`anvil did not answer at ${url} within 20 s: ${stderr.trim()}`);
    }
  }
  return {
    url,
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killed = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(killed);
    },
  };
}

/** The chain id a JSON-RPC endpoint reports, or null when nothing answers there. */
export async function rpcChainId(url: string, timeoutMs = 1_000): Promise<number | null> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await response.json()) as { result?: string };
    return body.result ? Number(BigInt(body.result)) : null;
  } catch {
    return null;
  }
}

async function answers(url: string): Promise<boolean> {
  return (await rpcChainId(url, 500)) !== null;
}
