// What the bench scripts share: ports, waiting for a server, stopping a child, reading a process's
// CPU time and memory from /proc (Linux), and the signed create requests the loads send.
import { createHmac } from 'node:crypto';
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

/** A basket: the quantity varies per request, as real baskets do, so quoted amounts differ. */
export function basket() {
  const quantity = 1 + Math.floor(Math.random() * 999);
  return JSON.stringify({
    user: { id: `bench-${quantity}`, email: 'bench@example.com' },
    items: [{ name: 'Bench item', quantity, unit_price: 19.99 }],
    currency: 'USD',
  });
}

/** Signed create requests, each with a timestamp of its own (Kassa accepts a signature once). */
export function signer(key) {
  let lastTimestamp = 0;
  return () => {
    const body = basket();
    lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
    const timestamp = String(lastTimestamp);
    return {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'x-service-key': key.api_key,
        'x-service-timestamp': timestamp,
        'x-service-signature': createHmac('sha256', key.api_secret).update(`${timestamp}.${body}`).digest('hex'),
      },
    };
  };
}
