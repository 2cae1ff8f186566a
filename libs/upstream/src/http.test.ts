import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamError } from "./errors.js";
import { postJsonAnswer, postJsonChunks } from "./http.js";

/** A provider on loopback whose answer each test chooses by path. */
const answers: Record<string, (req: IncomingMessage, res: ServerResponse, body: string) => void> = {
  "/echo": (req, res, body) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ body: JSON.parse(body), type: req.headers["content-type"], key: req.headers["x-key"], query: req.url }));
  },
  "/text": (_req, res) => res.end("not json"),
  "/accented": (_req, res) => res.end('{"model":"modèle","embedding":"AACAPw=="}'),
  "/limited": (_req, res) => {
    res.writeHead(429, { "retry-after": "2" });
    res.end("slow down");
  },
  "/rejected": (_req, res) => {
    res.writeHead(400);
    res.end("x".repeat(600));
  },
  "/slow": (_req, res) => void setTimeout(() => res.end("{}"), 2000),
  "/dropped": (_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
    res.write('{"id":');
    setTimeout(() => res.socket?.destroy(), 20);
  },
};

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => answers[new URL(req.url ?? "/", "http://x").pathname]!(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const live = () => new AbortController().signal;
const failure = (promise: Promise<unknown>) => promise.then(() => expect.unreachable("it should fail"), (error: unknown) => error);

describe("postJsonChunks", () => {
  it("returns the answer's bytes as they came, and undefined for one cut off mid-body", async () => {
    const chunks = await postJsonChunks("p", `${base}/accented`, {}, {}, live());
    expect(Buffer.concat(chunks!).toString("utf8")).toBe('{"model":"modèle","embedding":"AACAPw=="}');
    expect(await postJsonChunks("p", `${base}/dropped`, {}, {}, live())).toBeUndefined();
  });

  it("fails an error status as postJsonAnswer does", async () => {
    const error = await failure(postJsonChunks("p", `${base}/limited`, {}, {}, live()));
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 2000 });
  });
});

describe("postJsonAnswer", () => {
  it("sends the JSON body with its headers and returns the answer parsed", async () => {
    const answer = await postJsonAnswer("p", `${base}/echo?v=1`, { "x-key": "k" }, { model: "m", n: 1 }, live());
    expect(answer).toEqual({ body: { model: "m", n: 1 }, type: "application/json", key: "k", query: "/echo?v=1" });
  });

  it("returns undefined for an answer that is not JSON, and for one cut off mid-body", async () => {
    expect(await postJsonAnswer("p", `${base}/text`, {}, {}, live())).toBeUndefined();
    expect(await postJsonAnswer("p", `${base}/dropped`, {}, {}, live())).toBeUndefined();
  });

  it("turns an error status into an UpstreamError that says whether to try elsewhere, and when", async () => {
    const limited = await failure(postJsonAnswer("p", `${base}/limited`, {}, {}, live()));
    expect(limited).toBeInstanceOf(UpstreamError);
    expect(limited).toMatchObject({ message: "p answered 429: slow down", status: 429, retryable: true, retryAfterMs: 2000 });
    const rejected = await failure(postJsonAnswer("p", `${base}/rejected`, {}, {}, live()));
    expect(rejected).toMatchObject({ status: 400, retryable: false });
    expect((rejected as Error).message).toBe(`p answered 400: ${"x".repeat(500)}`);
  });

  it("calls a provider that cannot be reached retryable, with no status", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(postJsonAnswer("p", `http://127.0.0.1:${port}/`, {}, {}, live()));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: null, retryable: true });
    expect((error as Error).message).toMatch(/^p unreachable: /);
  });

  it("keeps the caller's abort an abort, before the call and while it waits", async () => {
    const before = new AbortController();
    before.abort(new Error("gone already"));
    expect(await failure(postJsonAnswer("p", `${base}/slow`, {}, {}, before.signal))).toMatchObject({ message: "gone already" });

    const during = new AbortController();
    const started = performance.now();
    setTimeout(() => during.abort(new Error("client disconnected")), 50);
    const error = await failure(postJsonAnswer("p", `${base}/slow`, {}, {}, during.signal));
    expect(error).not.toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ message: "client disconnected" });
    expect(performance.now() - started).toBeLessThan(1500);
  });
});
