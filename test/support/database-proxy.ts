import net from 'node:net';

/** A TCP proxy to PostgreSQL that can refuse connections (and cut open ones) or stall them. */
export interface DatabaseProxy {
  readonly port: number;
  mode: 'forward' | 'refuse' | 'stall';
  cutAll(): void;
  close(): Promise<void>;
}

export async function startDatabaseProxy(target: URL): Promise<DatabaseProxy> {
  const sockets = new Set<net.Socket>();
  const proxy = { mode: 'forward' } as DatabaseProxy;
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    if (proxy.mode === 'refuse') return void client.destroy();
    if (proxy.mode === 'stall') return; // accepted, never answered
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(proxy, {
    port: (server.address() as net.AddressInfo).port,
    cutAll: () => sockets.forEach((socket) => socket.destroy()),
    close: async () => {
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => server.close(resolve));
    },
  });
}
