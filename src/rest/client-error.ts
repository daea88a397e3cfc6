import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody } from '../http/http-error.js';

/**
 * Requests Node's HTTP parser refuses before Express sees them (oversized headers, a garbage request line) get the
 * spec's error body too, not an empty response.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || (error as { code?: string }).code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'HPE_URI_TOO_LONG' ? 414 : 400;
    const message =
      status === 431
        ? 'Request headers are too large'
        : status === 414
          ? 'Request URI is too long'
          : 'Malformed HTTP request';
    const body = JSON.stringify(errorBody(status, message));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
