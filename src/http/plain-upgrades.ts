import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** How long a request taken back from an upgrade may take to send its body, and its answer to be written. */
const PLAIN_REQUEST_TIMEOUT_MS = 30_000;

/**
 * Node hands every `Connection: Upgrade` request to the 'upgrade' listeners, so an `Upgrade: h2c` create would get the
 * WebSocket library's refusal: `isOurs` upgrades go to `upgrade`, the rest are served as HTTP/1.1 (RFC 9110 §7.8).
 */
export function takeUpgrades(
  server: Server,
  isOurs: (req: IncomingMessage) => boolean,
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (isOurs(req)) upgrade(req, socket, head);
    else servePlainly(server, req, socket, head);
  });
}

/** `upgrade` answered by `server`'s request handler on `socket`, its body (if any) read from `head` and the socket. */
function servePlainly(server: Server, upgrade: IncomingMessage, duplex: Duplex, head: Buffer): void {
  // An HTTP server's connections are sockets (Node types the event's argument as the wider Duplex).
  const socket = duplex as Socket;
  // Node has ended the upgrade's own request stream (its body is not the parser's any more): the same request
  // again, with a stream of its own for the body.
  const req = new IncomingMessage(socket);
  req.httpVersionMajor = upgrade.httpVersionMajor;
  req.httpVersionMinor = upgrade.httpVersionMinor;
  req.httpVersion = upgrade.httpVersion;
  req.method = upgrade.method;
  req.url = upgrade.url;
  req.headers = upgrade.headers;
  req.rawHeaders = upgrade.rawHeaders;
  socket.on('error', () => socket.destroy());
  socket.setTimeout(PLAIN_REQUEST_TIMEOUT_MS, () => socket.destroy());
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket);
  res.once('finish', () => {
    res.detachSocket(socket);
    // Whatever the client still sends is not read: the connection ends with the answer (ended, not only half-closed,
    // so a body that never stops is not taken in).
    socket.removeAllListeners('data');
    socket.end(() => socket.destroy());
    socket.resume();
  });
  // A client that waits for `100 Continue` before its body (Node's parser would have sent it).
  if (/^100-continue$/i.test(req.headers.expect ?? '')) socket.write('HTTP/1.1 100 Continue\r\n\r\n');
  feedBody(req, socket, head);
  server.emit('request', req, res);
}

/**
 * Node's parser stops at an upgrade request's headers: a body of known length is fed to `req` as it arrives; a chunked
 * or unparsable length ends the request where it stands (its reader answers the body as incomplete).
 */
function feedBody(req: IncomingMessage, socket: Socket, head: Buffer): void {
  const declared = req.headers['content-length'];
  const length = declared === undefined ? 0 : Number(declared);
  if (!Number.isSafeInteger(length) || length <= 0 || req.headers['transfer-encoding'] !== undefined) {
    finish(req);
    return;
  }
  let left = length;
  const take = (chunk: Buffer) => {
    const part = chunk.length > left ? chunk.subarray(0, left) : chunk;
    left -= part.length;
    if (part.length > 0) req.push(part);
    if (left === 0) {
      socket.off('data', take);
      finish(req);
    }
  };
  take(head);
  if (left > 0) {
    socket.on('data', take);
    socket.resume();
  }
}

/** Ends `req`'s body as whole: a request stream that ends incomplete destroys its socket (Node takes it as aborted). */
function finish(req: IncomingMessage): void {
  req.complete = true;
  req.push(null);
}
