import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * What a process's TCP sockets are, read from Linux's /proc (the tests run on Linux): its socket inodes from
 * /proc/<pid>/fd, matched with the rows of /proc/<pid>/net/tcp and tcp6.
 */
interface TcpSocket {
  readonly localPort: number;
  /** The kernel's state code: '0A' is LISTEN. */
  readonly state: string;
}

async function tcpSocketsOf(pid: number): Promise<TcpSocket[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    const match = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''));
    if (match) inodes.add(match[1]!);
  }
  const sockets: TcpSocket[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const text = await readFile(`/proc/${pid}/net/${table}`, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      if (columns.length <= 9 || !inodes.has(columns[9]!)) continue;
      sockets.push({ localPort: parseInt(columns[1]!.split(':').pop()!, 16), state: columns[3]! });
    }
  }
  return sockets;
}

/** The TCP ports the process listens on, ascending. */
export async function listeningTcpPorts(pid: number): Promise<number[]> {
  const ports = (await tcpSocketsOf(pid)).filter((socket) => socket.state === '0A').map((s) => s.localPort);
  return [...new Set(ports)].sort((a, b) => a - b);
}

/** The process (of `pids`) that owns a TCP socket with local port `port`: who sent a request we received. */
export async function ownerOfPort(port: number, pids: readonly number[]): Promise<number | undefined> {
  for (const pid of pids) if ((await tcpSocketsOf(pid)).some((socket) => socket.localPort === port)) return pid;
  return undefined;
}
