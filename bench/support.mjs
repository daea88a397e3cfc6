// What the bench scripts share: ports, waiting for a server, stopping a child, and reading a
// process's CPU time and memory from /proc (Linux).
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once `url` answers as `ok` says (by default, any 2xx); gives up after a minute. */
export async function waitFor(url, ok = (response) => response.ok) {
  for (let i = 0; i < 600; i++) {
    try {
      if (ok(await fetch(url))) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer`);
}

/** Stops a child process with SIGTERM and resolves when it has exited. */
export function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}

/** CPU time a process has used, in ms (user + system). */
export function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** CPU time a process has spent in the kernel, in ms. */
export function systemCpuMs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[12]) * 10;
  } catch {
    return 0;
  }
}

/** Resident set size of a process in MB. */
export function rssMb(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return Math.round(Number(line.split(/\s+/)[1]) / 1024);
  } catch {
    return null;
  }
}
