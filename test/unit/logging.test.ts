import { describe, expect, it } from 'vitest';
import { redactMisplacedSecret } from '../../src/logging.js';

describe('redactMisplacedSecret', () => {
  it('keeps a public key (pk_…) in the logged headers', () => {
    const req = { headers: { 'x-service-key': 'pk_abc', host: 'h' } };
    expect(redactMisplacedSecret(req)).toEqual(req);
  });

  it('redacts anything else sent as X-Service-Key, such as a pasted secret, and leaves the other headers', () => {
    expect(redactMisplacedSecret({ headers: { 'x-service-key': 'sk_0123', host: 'h' } })).toEqual({
      headers: { 'x-service-key': '[redacted]', host: 'h' },
    });
  });

  it('leaves requests without the header alone', () => {
    expect(redactMisplacedSecret({ headers: { host: 'h' } })).toEqual({ headers: { host: 'h' } });
  });
});
