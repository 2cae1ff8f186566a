import { Writable } from "node:stream";
import { Client } from "undici";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createLogger, silentLogger } from "../log.js";
import { createHttpApp, finishHttpApp } from "./app.js";
import { createMemoryBus } from "../bus/memory.js";
import type { Bus } from "../bus/types.js";
import { busReadiness, mountHealth } from "./health.js";
import { badRequest, parseInput } from "./errors.js";
import { createCallerSigner, createCallerVerifier, createServiceSigner, createServiceVerifier } from "./internal-auth.js";
import { serve } from "./serve.js";

const listen = async (app: Parameters<typeof serve>[0]["handler"]) =>
  serve({ handler: app, port: 0, host: "127.0.0.1", logger: silentLogger(), health: { draining: false }, drainTimeoutMs: 5000 });

describe("http app", () => {
  it("renders every error in the envelope with code = status, and never a 500 for bad input", async () => {
    const app = createHttpApp({ logger: silentLogger(), maxBodyBytes: 100 });
    app.post("/echo", (req, res) => {
      const body = parseInput(z.strictObject({ n: z.number().int().max(5) }), req.body, "body");
      res.json(body);
    });
    app.get("/boom", () => {
      throw new Error("secret detail");
    });
    app.get("/teapot", () => {
      throw badRequest("nope", { field: "x" });
    });
    const server = await listen(finishHttpApp(app, silentLogger()));
    const base = `http://127.0.0.1:${server.port}`;
    const post = (body: string) => fetch(`${base}/echo`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(await (await post('{"n":3}')).json()).toEqual({ n: 3 });
    const invalid = await post('{"n":9}');
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ error: { code: 400, message: expect.stringMatching(/^Invalid body: n: /) } });
    const unknown = (await (await post('{"n":1,"m":2}')).json()) as { error: { message: string } };
    expect(unknown.error.message).toMatch(/unknown field m/);
    expect((await post("{oops")).status).toBe(400);
    const big = await post(JSON.stringify({ n: "x".repeat(200) }));
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({ error: { code: 413, message: "Request payload too large" } });
    const boom = await fetch(`${base}/boom`);
    expect(boom.status).toBe(500);
    expect(await boom.json()).toEqual({ error: { code: 500, message: "Internal server error" } });
    expect(await (await fetch(`${base}/teapot`)).json()).toEqual({ error: { code: 400, message: "nope", metadata: { field: "x" } } });
    expect((await fetch(`${base}/missing`)).status).toBe(404);
    await server.drain();
  });

  it("finishes in-flight requests when draining and refuses new connections", async () => {
    const app = createHttpApp({ logger: silentLogger() });
    app.get("/slow", async (_req, res) => {
      await new Promise((r) => setTimeout(r, 300));
      res.json({ done: true });
    });
    const server = await listen(app);
    const inFlight = fetch(`http://127.0.0.1:${server.port}/slow`);
    await new Promise((r) => setTimeout(r, 50));
    const drained = server.drain();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    await drained;
    await expect(fetch(`http://127.0.0.1:${server.port}/slow`)).rejects.toThrow();
  });

  it("with a drain delay, keeps a connection whose answer ended mid-drain open for one more request", async () => {
    const app = createHttpApp({ logger: silentLogger() });
    app.get("/slow", async (_req, res) => {
      await new Promise((r) => setTimeout(r, 900));
      res.json({ done: true });
    });
    app.get("/fast", (_req, res) => {
      res.json({ done: true });
    });
    const server = await serve({ handler: app, port: 0, host: "127.0.0.1", logger: silentLogger(), health: { draining: false }, drainTimeoutMs: 5000, drainDelayMs: 300 });
    // One keep-alive connection, kept by the client for longer than the test.
    const client = new Client(`http://127.0.0.1:${server.port}`, { keepAliveTimeout: 10_000, keepAliveMaxTimeout: 10_000 });
    try {
      const slow = client.request({ path: "/slow", method: "GET" });
      await new Promise((r) => setTimeout(r, 50));
      const drained = server.drain();
      // Asked before the drain, answered after the listener closed: no `Connection: close`, so the client keeps it.
      const first = await slow;
      expect(first.statusCode).toBe(200);
      expect(first.headers.connection).not.toBe("close");
      await first.body.json();
      await new Promise((r) => setTimeout(r, 100));
      const second = await client.request({ path: "/fast", method: "GET" });
      expect(second.statusCode).toBe(200);
      expect(second.headers.connection).toBe("close");
      await second.body.json();
      await drained;
    } finally {
      await client.close();
    }
  });
});

describe("readiness", () => {
  it("reports its checks, and answers 503 at once while draining without waiting on them", async () => {
    const app = createHttpApp({ logger: silentLogger() });
    const health = { draining: false };
    let database: () => Promise<void> = async () => undefined;
    mountHealth(app, { database: () => database() }, health);
    const server = await listen(finishHttpApp(app, silentLogger()));
    const readyz = async () => {
      const started = performance.now();
      const res = await fetch(`http://127.0.0.1:${server.port}/readyz`);
      return { status: res.status, body: await res.json(), ms: performance.now() - started };
    };
    expect(await readyz()).toMatchObject({ status: 200, body: { status: "ready", checks: { database: "ok" } } });
    database = () => Promise.reject(new Error("connection refused"));
    expect(await readyz()).toMatchObject({ status: 503, body: { status: "not ready", checks: { database: "connection refused" } } });
    // A check that hangs (a ping queued behind a busy pool) must not hold up the answer of a draining process.
    database = () => new Promise(() => undefined);
    health.draining = true;
    const draining = await readyz();
    expect(draining).toMatchObject({ status: 503, body: { status: "draining" } });
    expect(draining.ms).toBeLessThan(1000);
    await server.drain();
  });

  it("stays ready with NATS away, reporting it as degraded, while a failed database still fails readiness", async () => {
    const app = createHttpApp({ logger: silentLogger() });
    let connected = true;
    const bus: Bus = { ...createMemoryBus({ logger: silentLogger() }), kind: "nats", healthy: () => connected };
    let database: () => Promise<void> = async () => undefined;
    mountHealth(app, { database: () => database(), ...busReadiness(bus) }, { draining: false });
    expect(busReadiness(createMemoryBus({ logger: silentLogger() }))).toEqual({});
    const server = await listen(finishHttpApp(app, silentLogger()));
    const readyz = async () => {
      const res = await fetch(`http://127.0.0.1:${server.port}/readyz`);
      return { status: res.status, body: await res.json() };
    };
    expect(await readyz()).toEqual({ status: 200, body: { status: "ready", checks: { database: "ok", nats: "ok" } } });
    connected = false;
    expect(await readyz()).toMatchObject({ status: 200, body: { status: "degraded", checks: { database: "ok", nats: expect.stringMatching(/^degraded: NATS unreachable/) } } });
    database = () => Promise.reject(new Error("connection refused"));
    expect(await readyz()).toMatchObject({ status: 503, body: { status: "not ready", checks: { database: "connection refused" } } });
    await server.drain();
  });
});

describe("internal authentication", () => {
  it("round-trips a caller and rejects other secrets and garbage", async () => {
    const secret = "a".repeat(40);
    const caller = { keyHash: "h", organizationId: "o", workspaceId: "w", management: true };
    const token = await createCallerSigner(secret)(caller);
    expect(await createCallerVerifier(secret)(token)).toEqual(caller);
    expect(await createCallerVerifier("b".repeat(40))(token)).toBeUndefined();
    expect(await createCallerVerifier(secret)("not.a.jwt")).toBeUndefined();
    // A service token is not a caller token and vice versa.
    const serviceToken = await createServiceSigner(secret, "router")();
    expect(await createServiceVerifier(secret)(serviceToken)).toBe("router");
    expect(await createCallerVerifier(secret)(serviceToken)).toBeUndefined();
    expect(await createServiceVerifier(secret)(token)).toBeUndefined();
  });
});

describe("logger", () => {
  it("redacts credentials", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ service: "t", destination: sink });
    logger.info({ req: { headers: { authorization: "Bearer sk-sy-v1-secret" } }, body: { key: "sk-sy-v1-other", api_key: "x" } }, "hello");
    const text = lines.join("");
    expect(text).toContain("hello");
    expect(text).not.toContain("sk-sy-v1-secret");
    expect(text).not.toContain("sk-sy-v1-other");
    expect(text).toContain("[redacted]");
  });
});
