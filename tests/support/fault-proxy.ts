import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

export interface FaultProxy {
  port: number;
  /** Drops every open connection and refuses new ones, as a database that went away. */
  cut(): Promise<void>;
  /** Accepts connections again on the same port. */
  restore(): Promise<void>;
  stop(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 in front of `target`, that a test cuts and restores: an outage of a shared server the test must not stop. */
export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  };
  const listen = async (port: number) => {
    const server = createServer((client) => {
      track(client);
      const upstream = connect(target);
      track(upstream);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    return server;
  };
  let server: Server | undefined = await listen(0);
  const port = (server.address() as AddressInfo).port;
  const cut = async () => {
    const closing = server;
    server = undefined;
    if (!closing) return;
    const closed = new Promise<void>((resolve) => closing.close(() => resolve()));
    for (const socket of open) socket.destroy();
    await closed;
  };
  return {
    port,
    cut,
    async restore() {
      server ??= await listen(port);
    },
    stop: cut,
  };
}
