// An open-loop load at a steady rate, for latency with headroom (the bench's "half load" rows).
//
// Why not autocannon's `overallRate`: autocannon 8/9 paces a connection by letting it send its whole
// per-second quota back to back and then wait for the next second, so "half load" is full load half
// of each second; and it corrects for coordinated omission with an expected interval of
// `Math.ceil(1 / rate)` — seconds, rounded up to 1 — in a histogram kept in milliseconds, so every
// response slower than 1 ms is recorded again once per millisecond it took. Its p99 at a set rate is
// therefore the p99 of full load, inflated.
//
// Here requests are due at even intervals (rate per second), each is sent on a free keep-alive
// connection as soon as it is due, and its latency is measured from when it was due, not from when
// it was sent: a request that waited for a free connection counts its wait (wrk2's way of not
// omitting the slow cases).
import net from 'node:net';

/**
 * Sends `rate` requests per second to `url` for `seconds`, over up to `connections` keep-alive
 * connections. `next()` returns `{ method, path, headers, body }` for each request (path relative
 * to `url`'s origin). Resolves with `{ rps, p50, p99, max, total }` (ms); rejects on any non-2xx.
 */
export function pacedLoad({ url, rate, seconds, next, connections = 64 }) {
  const { hostname, port } = new URL(url);
  const total = Math.max(1, Math.round(rate * seconds));
  const latencies = new Float64Array(total);
  const due = []; // due times (ms) of requests not yet sent
  const idle = [];
  const sockets = [];
  let scheduled = 0;
  let done = 0;
  let failure = null;

  return new Promise((resolve, reject) => {
    const start = performance.now();
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
      socket.once('connect', () => idle.push(connection));
    }

    // Every millisecond, whatever has come due is sent (or queued for the next free connection).
    const timer = setInterval(() => {
      const now = performance.now();
      while (scheduled < total && start + (scheduled * 1000) / rate <= now) {
        const dueAt = start + (scheduled++ * 1000) / rate;
        const connection = idle.pop();
        if (connection) send(connection, dueAt);
        else due.push(dueAt);
      }
    }, 1);
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
