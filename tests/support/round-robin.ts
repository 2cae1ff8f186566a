import { connect, createServer, type AddressInfo, type Socket } from "node:net";

export interface RoundRobin {
  url: string;
  port: number;
  /** Connections handed to each upstream, by index in `ports`. */
  connections: number[];
  stop(): Promise<void>;
}

/**
 * A TCP proxy on 127.0.0.1 that sends each new connection to the next upstream port in turn (skipping one
 * that refuses it), like a load balancer in front of replicas. HTTP keep-alive pins requests to
 * connections, so it balances connections, not requests.
 */
export async function startRoundRobin(ports: number[]): Promise<RoundRobin> {
  const connections = ports.map(() => 0);
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  };
  let next = 0;
  const server = createServer((client) => {
    // Nothing is read from the client until an upstream took the connection, so a refused one costs nothing.
    client.pause();
    track(client);
    const tryNext = (left: number) => {
      const index = next++ % ports.length;
      const upstream = connect({ host: "127.0.0.1", port: ports[index]! });
      track(upstream);
      let connected = false;
      upstream.once("error", () => {
        // Refused (a replica restarting): the next one, like a balancer that skips dead endpoints.
        if (connected) return;
        if (left > 1 && !client.destroyed) tryNext(left - 1);
        else client.destroy();
      });
      upstream.once("connect", () => {
        connected = true;
        connections[index]!++;
        client.pipe(upstream).pipe(client);
        // Either side failing ends both, as a dropped connection would.
        client.on("error", () => upstream.destroy());
        upstream.on("error", () => client.destroy());
        client.on("close", () => upstream.destroy());
        upstream.on("close", () => client.destroy());
        client.resume();
      });
    };
    tryNext(ports.length * 2);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connections,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}
