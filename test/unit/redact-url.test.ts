import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { redactUrl, redactUrlsIn } from '../../src/config/redact-url.js';
import { createLogger } from '../../src/logging.js';

/**
 * docs/operations.md#configuration (KASSA_RPC_URLS_<SLUG>): an RPC URL in a configuration error or a log
 * line shows its scheme and host only; user info, path, query and fragment (where providers
 * put API keys) become `/***`, whatever the user info holds.
 */

const SECRET = /alice|pa\/?ss|s3cr|et@|SECRETKEY|KEY123|hunter2|p@ss|Zm9v|token|apikey|v3|v2/i;

describe('redactUrl', () => {
  it.each([
    // [input, printed]
    ['https://rpc.example', 'https://rpc.example'],
    ['https://rpc.example:8545', 'https://rpc.example:8545'],
    ['http://127.0.0.1:8545', 'http://127.0.0.1:8545'],
    ['ws://[::1]:8546', 'ws://[::1]:8546'],
    ['https://rpc.example/', 'https://rpc.example/***'],
    ['https://mainnet.infura.io/v3/SECRETKEY0123456789abcdef', 'https://mainnet.infura.io/***'],
    ['https://eth-mainnet.g.alchemy.com/v2/SECRETKEY-_0123456789', 'https://eth-mainnet.g.alchemy.com/***'],
    ['https://rpc.example/?apikey=SECRETKEY', 'https://rpc.example/***'],
    ['https://rpc.example?apikey=SECRETKEY', 'https://rpc.example/***'],
    ['https://rpc.example#SECRETKEY', 'https://rpc.example/***'],
    ['https://alice:hunter2@rpc.example', 'https://rpc.example/***'],
    ['https://alice@rpc.example:8545/x', 'https://rpc.example:8545/***'],
    ['https://:hunter2@rpc.example', 'https://rpc.example/***'],
    ['https://alice:pa/ss@rpc.example/x', 'https://rpc.example/***'],
    ['https://alice:pa/ss@rpc.example', 'https://rpc.example/***'],
    ['https://alice:s3cr#et@rpc.example/v3/KEY123', 'https://rpc.example/***'],
    ['https://alice:s3cr?et@rpc.example', 'https://rpc.example/***'],
    ['https://alice:p@ss@rpc.example:443/v3/KEY123', 'https://rpc.example:443/***'],
    ['https://alice:p%40ss@rpc.example', 'https://rpc.example/***'],
    ['https://alice:1234/ss@rpc.example/x', 'https://rpc.example/***'],
    ['https://alice:pa\\ss@rpc.example/x', 'https://rpc.example/***'],
    ['alice:s3cr#et@rpc.example', 'rpc.example/***'],
    ['alice:s3cr#et@rpc.example/v3/KEY123', 'rpc.example/***'],
    ['rpc.example/v3/KEY123', 'rpc.example/***'],
    ['ftp://alice:hunter2@rpc.example:8545/rpc?apikey=KEY123', 'ftp://rpc.example:8545/***'],
    ['https//rpc.example/KEY123', 'https/***'],
    // Not a host where the host should be: nothing of it is printed.
    ['https://alice:hunter2@/x', 'https://***/***'],
    ['https://alice:pa ss@rpc.example', 'https://rpc.example/***'],
    ['https://alice:s3cr#et@Zm9v%2Ftoken', 'https://***/***'],
    ['https://alice:hunter2@rpc.example:port/x', 'https://***/***'],
    ['https://alice:hunter2@rpc_example!/x', 'https://***/***'],
    // An `@` in a path or query cannot be told from one in unencoded user info: the host is taken to follow it.
    ['https://rpc.example/x?owner=ops@mail.example', 'https://mail.example/***'],
    ['https://rpc.example/x?owner=ops@KEY123', 'https://***/***'],
    // Without an `@` there is no user info: a mistyped host is shown as typed.
    ['not a url', 'not a url'],
    ['rpc-node:8545', 'rpc-node:8545'],
    ['https://alice:hunter2@localhost:8545/x', 'https://localhost:8545/***'],
    ['https://alice:hunter2@10.0.0.5:8545', 'https://10.0.0.5:8545/***'],
    ['https://alice:hunter2@[fd00::5]:8545', 'https://[fd00::5]:8545/***'],
    ['https://alice:hunter2@geth:8545', 'https://***/***'],
    ['', ''],
  ])('%s → %s', (input, printed) => {
    expect(redactUrl(input)).toBe(printed);
    expect(redactUrl(input).replace(/^[a-z]+:\/\//, '')).not.toMatch(SECRET);
  });
});

describe('redactUrlsIn', () => {
  it('redacts every URL in a text and leaves the rest', () => {
    expect(
      redactUrlsIn(
        'HTTP request failed.\nURL: https://mainnet.infura.io/v3/SECRETKEY\nStatus: 401; also wss://alice:hunter2@ws.example/ws.',
      ),
    ).toBe('HTTP request failed.\nURL: https://mainnet.infura.io/***\nStatus: 401; also wss://ws.example/***');
    expect(redactUrlsIn('Failed to parse URL from https://alice:pa/ss@rpc.example/x')).toBe(
      'Failed to parse URL from https://rpc.example/***',
    );
    expect(redactUrlsIn('no url here')).toBe('no url here');
  });

  // Found by a review: every Kassa frame of a logged stack trace read `file:///***` (path, line and column gone).
  it("leaves a stack trace's file: URLs whole", () => {
    const frame = '    at async transaction (file:///srv/kassa/dist/db/prisma-store.js:41:19)';
    expect(redactUrlsIn(`Error: boom\n${frame}`)).toBe(`Error: boom\n${frame}`);
  });
});

describe('the log', () => {
  function capture(): { logger: ReturnType<typeof createLogger>; text: () => string } {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
    return { logger: createLogger('info', stream), text: () => chunks.join('') };
  }

  it('never shows an RPC URL’s credentials in a logged error: message, stack, properties, cause', async () => {
    const { logger, text } = capture();
    const cause = new Error('connect ECONNREFUSED for https://alice:hunter2@rpc.example/v3/SECRETKEY');
    const error = Object.assign(
      new Error('HTTP request failed.\n\nURL: https://mainnet.infura.io/v3/SECRETKEY\nVersion: viem@2'),
      {
        url: 'https://eth-mainnet.g.alchemy.com/v2/SECRETKEY',
        details: 'https://alice:pa/ss@rpc.example/?apikey=SECRETKEY',
        metaMessages: ['URL: https://rpc.example/?apikey=SECRETKEY'],
        cause,
      },
    );
    logger.error({ err: error }, 'chain watcher tick failed');
    logger.warn({ err: 'HTTP request failed. URL: https://mainnet.infura.io/v3/SECRETKEY' }, 'retrying');
    await new Promise((resolve) => setImmediate(resolve));
    const lines = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(2);
    expect(text()).not.toMatch(/SECRETKEY|hunter2|alice|pa\/ss/);
    expect(lines[0].err.message).toContain('URL: https://mainnet.infura.io/***');
    expect(lines[0].err.url).toBe('https://eth-mainnet.g.alchemy.com/***');
    expect(lines[0].err.type).toBe('Error');
    expect(lines[0].err.stack).toMatch(/^Error: HTTP request failed\./);
    expect(lines[1].err).toBe('HTTP request failed. URL: https://mainnet.infura.io/***');
  });
});
