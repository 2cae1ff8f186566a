import net from "node:net";

/**
 * Preload (`node --import`) for servers the benchmark starts that listen on every interface when no host is
 * given: a `listen` without a host listens on 127.0.0.1 instead. Paths, handles and explicit hosts are kept.
 */
const listen = net.Server.prototype.listen;
const loopback = "127.0.0.1";

function withLoopback(args: unknown[]): unknown[] {
  const [first, second, ...rest] = args;
  if (first === undefined || typeof first === "function") return [0, loopback, ...args.filter((a) => a !== undefined)];
  const isPort = typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first));
  if (isPort) {
    if (typeof second === "string") return args; // a host was given
    if (second === undefined || second === null) return [first, loopback, ...rest];
    return [first, loopback, second, ...rest]; // a backlog or a callback follows the port
  }
  if (typeof first === "object" && first !== null) {
    const options = first as Record<string, unknown>;
    const elsewhere = options.path !== undefined || options.fd !== undefined || options.handle !== undefined || "_handle" in options;
    if (!elsewhere && !options.host) return [{ ...options, host: loopback }, ...args.slice(1)];
  }
  return args;
}

net.Server.prototype.listen = function listenOnLoopback(this: net.Server, ...args: unknown[]) {
  return Reflect.apply(listen, this, withLoopback(args)) as net.Server;
} as typeof listen;
