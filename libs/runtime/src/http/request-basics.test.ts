import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../log.js";
import { readJsonBody, readsAsPlainJson, sendError, sendJson } from "./request-basics.js";

let server: Server;
let url: string;
const limit = 64;

beforeAll(async () => {
  server = createServer((req, res) => {
    readJsonBody(req, limit).then(
      (body) => sendJson(res, 200, { body: body === undefined ? "none" : body }),
      (error: unknown) => sendError(res, error, silentLogger(), undefined),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const post = async (body: string | ReadableStream<Uint8Array> | undefined, headers: Record<string, string> = { "content-type": "application/json" }) => {
  const res = await fetch(url, { method: "POST", headers, body, ...(body instanceof ReadableStream ? { duplex: "half" } : {}) } as RequestInit);
  return { status: res.status, body: (await res.json()) as unknown };
};

describe("readJsonBody", () => {
  it("reads JSON as express.json does: any JSON value, {} when empty, nothing when it is not JSON", async () => {
    expect(await post('{"a":[1,"é"]}')).toEqual({ status: 200, body: { body: { a: [1, "é"] } } });
    expect(await post("42", { "content-type": "application/json; charset=utf-8" })).toEqual({ status: 200, body: { body: 42 } });
    expect(await post("", { "content-type": "application/json", "content-length": "0" })).toEqual({ status: 200, body: { body: "none" } });
    expect(await post('{"a":1}', { "content-type": "text/plain" })).toEqual({ status: 200, body: { body: "none" } });
  });

  it("answers bad JSON with a 400 and a body over the limit with a 413, announced or not", async () => {
    expect(await post("{nope")).toEqual({ status: 400, body: { error: { code: 400, message: "Invalid JSON body" } } });
    expect(await post(JSON.stringify({ text: "x".repeat(100) }))).toMatchObject({ status: 413, body: { error: { code: 413 } } });
    // Chunked, so the size is only known while reading: the client still gets its answer, not a reset.
    const chunked = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode(`"${"y".repeat(20)}"`));
        controller.close();
      },
    });
    expect(await post(chunked)).toMatchObject({ status: 413, body: { error: { message: "Request payload too large" } } });
  });
});

describe("readsAsPlainJson", () => {
  const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
  it("leaves compressed bodies and other charsets to express", () => {
    expect(readsAsPlainJson(request({ "content-type": "application/json" }))).toBe(true);
    expect(readsAsPlainJson(request({ "content-type": "application/json; charset=UTF-8", "content-encoding": "identity" }))).toBe(true);
    expect(readsAsPlainJson(request({ "content-type": "application/json", "content-encoding": "gzip" }))).toBe(false);
    expect(readsAsPlainJson(request({ "content-type": "application/json; charset=utf-16" }))).toBe(false);
  });
});
