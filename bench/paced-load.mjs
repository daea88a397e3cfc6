// An open-loop load at a steady rate, for latency with headroom (the bench's "half load" rows).
//
// Why not autocannon's `overallRate`: autocannon 8/9 paces a connection by letting it send its whole
// per-second quota back to back and then wait for the next second, so "half load" is full load half
// of each second; and it corrects for coordinated omission with an expected interval of
// `Math.ceil(1 / rate)` — seconds, rounded up to 1 — in a histogram kept in milliseconds, so every
// response slower than 1 ms is recorded again once per millisecond it took. Its p99 at a set rate is
// therefore the p99 of full load, inflated.
//
// Here the connections are opened first; then requests are due at even intervals (rate per second),
// each is sent on a free keep-alive connection as soon as it is due, and its latency is measured from when it was due, not from when
// it was sent: a request that waited for a free connection counts its wait (wrk2's way of not
// omitting the slow cases).
//
// The load runs in a worker thread of its own: its timing is not disturbed by the collections of
// the bench's main heap (which holds every earlier run's results).
import net from 'node:net';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { signer } from './support.mjs';

/**
 * Sends `rate` requests per second to `url` for `seconds` from a worker thread. `request` is
 * `{ path }` for a GET, or `{ path, signedBy: key }` for a create signed with `key` (a new basket
 * and timestamp each time). Resolves with `{ rps, p50, p99, max, total }` (ms); rejects on any non-2xx.
 */
export function pacedLoad({ url, rate, seconds, request, connections = 64 }) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { url, rate, seconds, request, connections } });
    worker.once('message', (message) => (message.error ? reject(new Error(message.error)) : resolve(message)));
    worker.once('error', reject);
  });
}

if (!isMainThread && workerData?.request) {
  const { request, ...options } = workerData;
  const sign = request.signedBy ? signer(request.signedBy) : null;
  const next = sign ? () => ({ path: request.path, ...sign() }) : () => ({ path: request.path });
  runLoad({ ...options, next }).then(
    (result) => parentPort.postMessage(result),
    (error) => parentPort.postMessage({ error: error.message }),
  );
}

/**
 * The load itself, over up to `connections` keep-alive connections. `next()` returns
 * `{ method, path, headers, body }` for each request (path relative to `url`'s origin).
 */
function runLoad({ url, rate, seconds, next, connections }) {
  const { hostname, port } = new URL(url);
  const total = Math.max(1, Math.round(rate * seconds));
  const latencies = new Float64Array(total);
  const due = []; // due times (ms) of requests not yet sent
  const idle = [];
  const sockets = [];
  let scheduled = 0;
  let done = 0;
  let failure = null;
  const slow = [];

  return new Promise((resolve, reject) => {
    let start = 0;
    let timer = null;
    const finish = (error) => {
      clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      if (error) return reject(error);
      const elapsed = (performance.now() - start) / 1000;
      const sorted = latencies.slice(0, done).sort();
      const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
      resolve({
        rps: done / elapsed,
        p50: round(at(0.5)),
        p99: round(at(0.99)),
        max: round(sorted.at(-1)),
        total: done,
        slowAt: process.env.BENCH_SLOW ? slow : undefined,
      });
    };

    const send = (connection, dueAt) => {
      const { method = 'GET', path = '/', headers = {}, body } = next();
      const bytes = body === undefined ? 0 : Buffer.byteLength(body);
      let head = `${method} ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: keep-alive\r\n`;
      for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
      if (body !== undefined) head += `content-length: ${bytes}\r\n`;
      connection.dueAt = dueAt;
      connection.socket.write(body === undefined ? `${head}\r\n` : `${head}\r\n${body}`);
    };

    const answered = (connection, status) => {
      if (status < 200 || status > 299) failure ??= new Error(`${url}: status ${status}`);
      latencies[done++] = performance.now() - connection.dueAt;
      if (latencies[done - 1] > 10) slow.push([Math.round(connection.dueAt - start), Math.round(latencies[done - 1])]);
      if (failure) return finish(failure);
      if (done === total) return finish();
      if (due.length > 0) send(connection, due.shift());
      else idle.push(connection);
    };

    for (let i = 0; i < connections; i++) {
      const socket = net.connect({ host: hostname, port: Number(port), noDelay: true });
      const connection = { socket, dueAt: 0, buffer: Buffer.alloc(0) };
      sockets.push(socket);
      socket.on('error', (error) => finish(error));
      socket.on('data', (chunk) => {
        connection.buffer = connection.buffer.length === 0 ? chunk : Buffer.concat([connection.buffer, chunk]);
        for (;;) {
          const length = responseLength(connection.buffer);
          if (length === null) return;
          const status = Number(connection.buffer.toString('latin1', 9, 12));
          connection.buffer = connection.buffer.subarray(length);
          answered(connection, status);
        }
      });
      socket.once('connect', () => {
        idle.push(connection);
        // The clock starts once every connection is open (and the server had a moment to take them): opening
        // 64 connections is not part of the load.
        if (idle.length === connections) setTimeout(begin, 50);
      });
    }

    // Every millisecond, whatever has come due is sent (or queued for the next free connection).
    const begin = () => {
      start = performance.now();
      timer = setInterval(tick, 1);
    };
    const tick = () => {
      const now = performance.now();
      while (scheduled < total && start + (scheduled * 1000) / rate <= now) {
        const dueAt = start + (scheduled++ * 1000) / rate;
        const connection = idle.pop();
        if (connection) send(connection, dueAt);
        else due.push(dueAt);
      }
    };
  });
}

/** Bytes of the first whole HTTP/1.1 response in `buffer`, or null while it is incomplete. */
function responseLength(buffer) {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const head = buffer.toString('latin1', 0, headEnd).toLowerCase();
  const length = /\r\ncontent-length: *(\d+)/.exec(head);
  if (length) {
    const end = headEnd + 4 + Number(length[1]);
    return buffer.length >= end ? end : null;
  }
  if (/\r\ntransfer-encoding: *chunked/.test(head)) {
    const end = buffer.indexOf('\r\n0\r\n\r\n', headEnd);
    return end < 0 ? null : end + 7;
  }
  return headEnd + 4; // no body (204, 304)
}

function round(ms) {
  return Math.round(ms * 10) / 10;
}
