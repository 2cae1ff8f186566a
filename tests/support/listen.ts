import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Starts a fake upstream on a free 127.0.0.1 port: its `/v1` base URL, and a stop that drops open sockets. */
export async function listenLocal(server: Server): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
