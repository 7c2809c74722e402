/**
 * A TCP link on loopback between the API and Triton that the test can cut: the network
 * failure the Triton gRPC error alert is about, made without stopping Triton (whose own
 * series must stay up for the dashboards).
 */
import net from 'node:net';

export interface Link {
  /** host:port to dial instead of the target. */
  address: string;
  /** Drops every open connection and every new one until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startLink(targetPort: number): Promise<Link> {
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const dropAll = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    address: `127.0.0.1:${port}`,
    cut() {
      cut = true;
      dropAll();
    },
    restore() {
      cut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
