import { spawn } from "node:child_process";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { silentLogger } from "@switchyard/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { forwardTo, type Target } from "./targets.js";

type Handler = (req: IncomingMessage, res: ServerResponse, body: string, nth: number) => void;

/**
 * A service replica on 127.0.0.1 that counts its connections and the requests each one carried, so a test
 * can see which requests reached it, on which connection.
 */
async function replica(handler: Handler) {
  const seen: Array<{ method: string; url: string; body: string; headers: http.IncomingHttpHeaders }> = [];
  const perSocket = new Map<Socket, number>();
  const server = http.createServer(async (req, res) => {
    const nth = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, nth);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    seen.push({ method: req.method!, url: req.url!, body, headers: req.headers });
    handler(req, res, body, nth);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    connections: () => perSocket.size,
    stop: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const echo: Handler = (req, res, body) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ method: req.method, url: req.url, body }));
};

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The router's side: a server that hands every request to the forwarder under test. */
async function front(target: Target) {
  const server = http.createServer(forwardTo("svc", target, silentLogger()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  /** One request on its own connection, so only the router's pool is under test. */
  return (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
      const req = http.request(`${base}${path}`, { method, agent: false, headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(body);
    });
}

/** A port nothing listens on: a replica that is down. */
async function closedPort() {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe("forwarding to a service's replicas", () => {
  it("passes method, path, body and end-to-end headers, and says who called", async () => {
    const svc = await replica(echo);
    cleanups.push(svc.stop);
    const call = await front({ kind: "url", urls: [svc.url] });
    const res = await call("POST", "/api/v1/chat/completions?x=1", '{"a":1}', { connection: "keep-alive, x-hop", "x-hop": "1", "x-end": "2" });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ method: "POST", url: "/api/v1/chat/completions?x=1", body: '{"a":1}' });
    const headers = svc.seen[0]!.headers;
    expect(headers).toMatchObject({ "x-end": "2", "x-forwarded-for": "127.0.0.1", "x-forwarded-proto": "http" });
    expect(headers["x-hop"]).toBeUndefined();
    expect(headers["x-forwarded-host"]).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it("sends a request refused by one replica to another instead of answering 503", async () => {
    const down = await closedPort();
    const up = await replica(echo);
    cleanups.push(up.stop);
    const call = await front({ kind: "url", urls: [down, up.url] });
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => call("POST", "/x", JSON.stringify({ i }))));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(up.seen.map((s) => JSON.parse(s.body) as { i: number }).map((b) => b.i).sort()).toEqual([0, 1, 2, 3]);
  });

  it("sends a request again on a new connection when its keep-alive socket is dropped before any answer", async () => {
    // The second request on each connection finds it closed under it, as when a service closes idle sockets.
    const svc = await replica((req, res, body, nth) => (nth === 2 ? req.socket.destroy() : echo(req, res, body, nth)));
    cleanups.push(svc.stop);
    const call = await front({ kind: "url", urls: [svc.url] });
    expect((await call("GET", "/first")).status).toBe(200);
    const second = await call("POST", "/second", '{"kept":true}');
    expect(second.status).toBe(200);
    expect(JSON.parse(second.text)).toMatchObject({ body: '{"kept":true}' });
    expect(svc.seen.map((s) => s.url)).toEqual(["/first", "/second", "/second"]);
    expect(svc.connections()).toBe(2);
    // A bodiless request is sent again too (a new router: this one stopped reusing that service's sockets).
    const other = await front({ kind: "url", urls: [svc.url] });
    expect((await other("GET", "/warm")).status).toBe(200);
    expect((await other("DELETE", "/third")).status).toBe(200);
    expect(svc.seen.map((s) => s.url).slice(3)).toEqual(["/warm", "/third", "/third"]);
  });

  it("answers 503 without sending it twice when the body was streamed through", async () => {
    const svc = await replica((req, res, body, nth) => (nth === 2 ? req.socket.destroy() : echo(req, res, body, nth)));
    cleanups.push(svc.stop);
    const call = await front({ kind: "url", urls: [svc.url] });
    expect((await call("GET", "/first")).status).toBe(200);
    // An upload (not JSON) is never held in memory, so it cannot go again.
    const upload = await call("POST", "/files", "raw bytes", { "content-type": "application/octet-stream" });
    expect(upload.status).toBe(503);
    expect(JSON.parse(upload.text)).toEqual({ error: { code: 503, message: "Service temporarily unavailable" } });
    expect(upload.headers["retry-after"]).toBe("5");
    expect(svc.seen.filter((s) => s.url === "/files")).toHaveLength(1);
    // So is JSON larger than the replay limit.
    const big = await front({ kind: "url", urls: [svc.url], replayBodyBytes: 8 });
    expect((await big("GET", "/warm")).status).toBe(200);
    expect((await big("POST", "/large", '{"too":"long"}')).status).toBe(503);
  });

  it("stops reusing the sockets of a replica that answered Connection: close", async () => {
    const svc = await replica((req, res, body, nth) => {
      if (req.url === "/close") res.setHeader("connection", "close");
      // Slow enough that two requests at once take two connections.
      setTimeout(() => echo(req, res, body, nth), req.url === "/pair" ? 50 : 0);
    });
    cleanups.push(svc.stop);
    const call = await front({ kind: "url", urls: [svc.url] });
    await Promise.all([call("GET", "/pair"), call("GET", "/pair")]);
    expect(svc.connections()).toBe(2);
    const closed = await call("GET", "/close");
    expect(closed.status).toBe(200);
    // The other idle socket was dropped with it, and sockets freed meanwhile are not kept either.
    await call("GET", "/after");
    await call("GET", "/again");
    expect(svc.connections()).toBe(4);
  });

  it("serves from the other replica at once when one is SIGKILLed", async () => {
    const child = spawn(
      process.execPath,
      ["-e", "const s=require('http').createServer((q,r)=>{q.resume();q.on('end',()=>r.end('{\"from\":\"child\"}'))});s.keepAliveTimeout=65000;s.listen(0,'127.0.0.1',()=>console.log(s.address().port))"],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    cleanups.push(() => void child.kill("SIGKILL"));
    const port = await new Promise<string>((resolve) => child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString().trim())));
    const survivor = await replica(echo);
    cleanups.push(survivor.stop);
    const call = await front({ kind: "url", urls: [`http://127.0.0.1:${port}`, survivor.url] });
    // Both replicas have a kept-alive socket from the router.
    const before = await Promise.all([call("POST", "/a", "{}"), call("POST", "/b", "{}")]);
    expect(before.map((r) => r.status)).toEqual([200, 200]);
    expect(before.map((r) => r.text)).toContain('{"from":"child"}');
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    // Before any readiness check could notice: the dead replica's turn goes to the survivor.
    const after = await Promise.all(Array.from({ length: 4 }, (_, i) => call("POST", `/after-${i}`, "{}")));
    expect(after.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(survivor.seen.filter((s) => s.url.startsWith("/after-"))).toHaveLength(4);
  });

  it("ends a stream whose service died mid-way with the in-band error frame", async () => {
    const svc = await replica((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "x-generation-id": "gen-1" });
      res.write('data: {"choices":[]}\n\n');
      setTimeout(() => req.socket.destroy(), 20);
    });
    cleanups.push(svc.stop);
    const call = await front({ kind: "url", urls: [svc.url] });
    const res = await call("POST", "/api/v1/chat/completions", '{"stream":true}');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/^data: \{"choices":\[\]\}\n\ndata: \{.*"finish_reason":"error".*\}\n\n$/s);
    expect(res.text).toContain("gen-1");
    expect(svc.seen).toHaveLength(1);
  });

  it("closes the client's connection when the service answers before the client's body has all arrived", async () => {
    // A service that refuses a chunked body without reading it, as one over its size limit is refused.
    const svc = http.createServer((_req, res) => {
      res.writeHead(413, { "content-type": "application/json", connection: "close" });
      res.end('{"error":{"code":413,"message":"Request payload too large"}}');
    });
    await new Promise<void>((resolve) => svc.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => (svc.closeAllConnections(), svc.close(() => resolve()))));
    const router = http.createServer(forwardTo("svc", { kind: "url", urls: [`http://127.0.0.1:${(svc.address() as AddressInfo).port}`] }, silentLogger()));
    await new Promise<void>((resolve) => router.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => (router.closeAllConnections(), router.close(() => resolve()))));

    const client = connect((router.address() as AddressInfo).port, "127.0.0.1");
    client.on("error", () => undefined);
    let received = "";
    client.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    const closed = new Promise<boolean>((resolve) => {
      client.once("close", () => resolve(true));
      setTimeout(() => resolve(false), 15_000);
    });
    client.write("POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n[0,0,\r\n");
    while (!received.includes("\r\n\r\n") && !client.destroyed) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received.toLowerCase()).toContain("connection: close");
    // Whatever the client sends next is not taken for a request, nor left waiting: the connection ends.
    client.write("5\r\n0,0]\r\n0\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(await closed).toBe(true);
    expect(received.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });
});
