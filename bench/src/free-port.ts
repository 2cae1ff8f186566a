import { createServer } from "node:net";

/**
 * Ports for the servers the benchmark starts on fixed ports come from below the kernel's ephemeral range
 * (Linux 32768–60999): there no outgoing connection's local end can take one while its process starts.
 */
const portRange = { low: 20_000, high: 32_000 };

const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });

/** The first port of a block of `size` consecutive ports that nothing listens on. */
export async function freePortBlock(size: number): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = portRange.low + Math.floor(Math.random() * (portRange.high - portRange.low - size));
    const block = Array.from({ length: size }, (_, i) => base + i);
    if ((await Promise.all(block.map(isFree))).every(Boolean)) return base;
  }
  throw new Error(`no block of ${size} free ports between ${portRange.low} and ${portRange.high}`);
}
