import { connect, createServer, type AddressInfo, type Socket } from "node:net";

export interface RoundRobin {
  url: string;
  port: number;
  /** Connections handed to each upstream, by index in `ports`. */
  connections: number[];
  stop(): Promise<void>;
}

/**
 * A TCP proxy on 127.0.0.1 that sends each new connection to the next upstream port in turn, like a
 * Kubernetes Service in front of replicas: with `readyPath`, only to upstreams whose last probe passed (as a
 * Service drops unready pods from its endpoints); a connection the chosen upstream refuses fails, as it
 * would through a Service, and is never moved to another upstream. HTTP keep-alive pins requests to
 * connections, so it balances connections, not requests.
 */
export async function startRoundRobin(ports: number[], options: { readyPath?: string } = {}): Promise<RoundRobin> {
  const connections = ports.map(() => 0);
  // With a readiness path, upstreams failing it get no new connections, as a Service drops unready pods: at
  // once when one answers "not ready" or refuses the connection, and after three probes in a row that timed
  // out (Kubernetes' failureThreshold), since a process slow to answer on a busy machine is not unready.
  const ready = ports.map(() => true);
  const timeouts = ports.map(() => 0);
  const probe = options.readyPath
    ? setInterval(() => {
        ports.forEach((port, i) => {
          fetch(`http://127.0.0.1:${port}${options.readyPath}`, { signal: AbortSignal.timeout(500) }).then(
            (r) => {
              ready[i] = r.ok;
              timeouts[i] = 0;
              void r.body?.cancel();
            },
            (error: unknown) => {
              const timedOut = error instanceof Error && error.name === "TimeoutError";
              timeouts[i] = timedOut ? timeouts[i]! + 1 : 0;
              if (!timedOut || timeouts[i]! >= 3) ready[i] = false;
            },
          );
        });
      }, 100)
    : undefined;
  const pick = () => {
    for (let tried = 0; tried < ports.length; tried += 1) {
      const index = next++ % ports.length;
      if (ready[index]) return index;
    }
    return next++ % ports.length;
  };
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  };
  let next = 0;
  const server = createServer((client) => {
    // Nothing is read from the client until the upstream took the connection.
    client.pause();
    track(client);
    const index = pick();
    const upstream = connect({ host: "127.0.0.1", port: ports[index]! });
    track(upstream);
    // Either side failing ends both, as a dropped connection would; a refused upstream fails the client's.
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.once("connect", () => {
      connections[index]!++;
      client.pipe(upstream).pipe(client);
      // What the upstream sent last (a response with `Connection: close`) still reaches the client.
      upstream.on("close", () => client.end());
      client.resume();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connections,
    stop: () =>
      new Promise((resolve) => {
        clearInterval(probe);
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}
