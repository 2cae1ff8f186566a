import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";
import { chunk, rawConnection } from "./support/raw-socket.js";

/** Requests no well-behaved client sends, through the router: each is refused in the envelope, cheaply. */

let gw: TestGateway;
let alpha: FakeProvider;
let key: string;
let port: number;
const maxBodyBytes = 4 * 1024 * 1024;

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  const catalog = {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, api_key_env: "ALPHA_KEY" }],
    models: [
      {
        id: "chat/ok",
        name: "ok",
        context_length: 8000,
        endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: { prompt: "0.000001", completion: "0.000002" }, supported_parameters: ["tools"] }],
      },
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), MAX_BODY_BYTES: String(maxBodyBytes) });
  port = gw.standalone.port;
  key = String((await gw.call("POST", "/keys", { body: { name: "hostile" } })).body.key);
}, 240_000);
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
});

/** A POST with raw bytes; the answer's status, size and envelope. */
async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}, as = key) {
  const res = await fetch(`${gw.apiUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${as}`, "content-type": "application/json", ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, size: Buffer.byteLength(text), body: JSON.parse(text) as { error?: { code: number; message: string } } };
}

describe("validation errors are bounded", () => {
  it("answers a 2 MB body of a million bad messages with a short 400", async () => {
    const body = `{"messages":[${new Array(1_000_000).fill("0").join(",")}]}`;
    expect(body.length).toBeGreaterThan(2_000_000);
    const res = await post("/chat/completions", body);
    expect(res.status).toBe(400);
    expect(res.size).toBeLessThan(4096);
    expect(res.body.error).toEqual({ code: 400, message: expect.stringContaining("messages.0: ") as string });
  }, 60_000);

  it.each([
    ["/guardrails", "allowed_models"],
    ["/workspaces", "allowed_providers"],
    ["/keys", "name"],
  ])("bounds the answer on %s too (a million items in %s)", async (path, field) => {
    const res = await post(path, JSON.stringify({ name: "huge", slug: "huge", [field]: new Array(1_000_000).fill(0) }), {}, bootstrapKey);
    expect(res.status).toBe(400);
    expect(res.size).toBeLessThan(4096);
    expect(res.body.error?.message).toMatch(new RegExp(`^Invalid body: ${field}(\\.0)?: `));
  }, 60_000);
});

describe("a chunked body over the size limit", () => {
  it("gets a 413 that closes the connection, so nothing waits on it", async () => {
    const connection = await rawConnection(port);
    await connection.write(
      `POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const piece = chunk(`[${"0,".repeat(32_767)}0]`);
    // Send until the answer comes (or well past the limit), as a client streaming a body would.
    for (let sent = 0; sent < 2 * maxBodyBytes && !connection.received().includes("\r\n\r\n"); sent += piece.length) {
      if (!(await connection.write(piece))) break;
    }
    const answer = await connection.until((text) => text.includes("\r\n\r\n"), 20_000);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain("connection: close");
    // A second request on the same connection is not left waiting: the connection ends instead.
    await connection.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    const ended = await Promise.race([connection.closed.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 15_000))]);
    expect(ended).toBe(true);
    expect(connection.received().match(/HTTP\/1\.1 /g)).toHaveLength(1);
  }, 60_000);
});

describe("bodies whose Content-Encoding cannot be decoded", () => {
  const good = { name: "compressed" };
  it.each([
    ["gzip", gzipSync],
    ["deflate", deflateSync],
    ["br", brotliCompressSync],
  ] as const)("answers corrupt %s with 400 in the envelope", async (encoding, compress) => {
    // A real header and a broken rest: what a client whose compressor failed halfway sends.
    const corrupt = Buffer.concat([compress(Buffer.from(JSON.stringify(good))).subarray(0, 4), Buffer.from("not compressed at all")]);
    for (const [path, as] of [
      ["/keys", bootstrapKey],
      ["/chat/completions", key],
    ] as const) {
      const res = await post(path, corrupt, { "content-encoding": encoding }, as);
      expect({ path, status: res.status, error: res.body.error }).toEqual({
        path,
        status: 400,
        error: { code: 400, message: "Invalid request body: it could not be decoded as its Content-Encoding says" },
      });
    }
    // The same body compressed whole is read as ever.
    const fine = await post("/keys", compress(Buffer.from(JSON.stringify(good))), { "content-encoding": encoding }, bootstrapKey);
    expect(fine.status).toBe(201);
  });
});

describe("NUL characters in text", () => {
  it.each([
    ["/keys", { name: "a\u0000b" }, "name"],
    ["/workspaces", { name: "a\u0000b", slug: "nul-check" }, "name"],
    ["/guardrails", { name: "a\u0000b" }, "name"],
    ["/presets", { slug: "nul-check", name: "a\u0000b", model: "chat/ok" }, "name"],
    ["/federation-policies", { name: "ok", issuer: "https://issuer.example", audiences: ["a\u0000"] }, "audiences.0"],
    ["/keys", { name: "fine", metadata: { ["x\u0000"]: "y" } }, "metadata"],
  ])("POST %s with %j is a 400 naming the field", async (path, body, field) => {
    const res = await post(path, JSON.stringify(body), {}, bootstrapKey);
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(new RegExp(`^Invalid body: ${field.replace(".", "\\.")}: .*NUL \\(U\\+0000\\)`));
  });

  it("refuses NUL in a query the same way", async () => {
    const res = await fetch(`${gw.apiUrl}/keys?offset=1%00`, { headers: { authorization: `Bearer ${bootstrapKey}` } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^Invalid query: offset: .*NUL/);
  });
});

describe("a tool schema nested thousands of levels deep", () => {
  it("is a 400 that states the limit, not a provider error", async () => {
    const depth = 5_000;
    const schema = `${'{"type":"object","properties":{"a":'.repeat(depth)}{"type":"string"}${"}}".repeat(depth)}`;
    const body = `{"model":"chat/ok","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]}`;
    const res = await post("/chat/completions", body);
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/^Invalid body: tools\.0\.function\.parameters[.a-z]*…: nested deeper than 64 levels$/);
  });
});

describe("headers timeout", () => {
  it("closes a connection whose request stops halfway through its headers within 10–15 s", async () => {
    const connection = await rawConnection(port);
    const started = performance.now();
    await connection.write("POST /api/v1/keys HTTP/1.1\r\nHost: x\r\n");
    const ended = await Promise.race([connection.closed.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 25_000))]);
    expect(ended).toBe(true);
    expect(performance.now() - started).toBeGreaterThan(9_000);
    expect(connection.received()).toMatch(/^(HTTP\/1\.1 408 |$)/);
  }, 40_000);
});
