import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { stopWithParent } from "./cleanup.js";
import { benchConfig } from "./config.js";

/**
 * The `proxy` target: a bare proxy in a process of its own, node:http in front and an undici agent to the
 * upstream behind (as Switchyard's are), doing nothing between them. It reads each request's body whole, sends
 * it to the same path on the upstream, and writes the answer's status, content type and length and its bytes
 * back as they come. Its CPU per request is what one gateway hop's sockets and HTTP parsing cost for a
 * plan's bodies on the machine, before a gateway does its own work: the floor of every gateway's figures.
 */
if (!benchConfig.proxyUpstream) throw new Error("BENCH_PROXY_UPSTREAM is not set: the benchmark starts the proxy with the upstream it forwards to");
const upstream = new URL(benchConfig.proxyUpstream);
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256, pipelining: 1 });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const headers = { "content-type": req.headers["content-type"] ?? "application/json" };
    agent.dispatch(
      { origin: upstream.origin, path: req.url ?? "/", method: "POST", headers, body: Buffer.concat(chunks) },
      {
        onRequestStart() {},
        onResponseStart(_, status, answerHeaders) {
          const kept = ["content-type", "content-length"].filter((name) => answerHeaders[name] !== undefined);
          res.writeHead(status, Object.fromEntries(kept.map((name) => [name, answerHeaders[name]!])));
        },
        onResponseData: (_, chunk) => void res.write(chunk),
        onResponseEnd: () => void res.end(),
        onResponseError(_, error) {
          if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
          res.end(error.message);
        },
      },
    );
  });
});

server.listen(0, "127.0.0.1", () => process.send?.({ ready: true, port: (server.address() as AddressInfo).port }));
stopWithParent(() => {
  server.close();
  void agent.close();
  process.exit(0);
});
