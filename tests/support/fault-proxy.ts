import net from "node:net";

export interface FaultProxy {
  /** `127.0.0.1:<port>` of the proxy. */
  host: string;
  /** Drops every connection and refuses new ones (they are reset at once): the backend is down. */
  cut(): void;
  /** Passes connections through again. */
  restore(): void;
  stop(): Promise<void>;
}

/** A TCP proxy in front of a backend the test may take down without touching the shared server. */
export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const open = new Set<net.Socket>();
  let down = false;
  const server = net.createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    open.add(client).add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    cut() {
      down = true;
      for (const socket of open) socket.destroy();
      open.clear();
    },
    restore() {
      down = false;
    },
    async stop() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
