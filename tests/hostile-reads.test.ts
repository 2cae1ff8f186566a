import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * Reads and model names no well-behaved client sends, through the router: each is a short 4xx that names the
 * field, never a 500 from a database that refuses the value, nor an answer as large as what was sent.
 */

let gw: TestGateway;
let alpha: FakeProvider;
let key: string;

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  const catalog = {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, api_key_env: "ALPHA_KEY" }],
    models: [{ id: "chat/ok", name: "ok", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: { prompt: "0.000001", completion: "0.000002" } }] }],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), ALPHA_KEY: "alpha-secret", MAX_BODY_BYTES: String(8 * 1024 * 1024) });
  key = String((await gw.call("POST", "/keys", { body: { name: "hostile-reads" } })).body.key);
}, 240_000);
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
});

/** A GET with the management key: status, size and error. */
async function read(path: string) {
  const res = await fetch(`${gw.apiUrl}${path}`, { headers: { authorization: `Bearer ${bootstrapKey}` } });
  const text = await res.text();
  return { status: res.status, size: Buffer.byteLength(text), error: (JSON.parse(text) as { error?: { code: number; message: string } }).error };
}

describe("timestamps Postgres cannot read", () => {
  it.each([
    ["/generations?from=0000-01-01T00:00:00Z", "from: must be in the year 1 or later"],
    ["/generations?to=0000-06-01T00:00:00Z", "to: must be in the year 1 or later"],
    ["/generations?from=2030-01-01T00:00:00%2B16:00", "from: must have a UTC offset of at most 15:59 either way"],
    ["/generations?to=2030-01-01T00:00:00-23:59", "to: must have a UTC offset of at most 15:59 either way"],
    ["/activity/daily?from=0000-01-01&to=0000-01-02", "from: must be in the year 1 or later"],
    ["/activity/daily?from=2026-01-01&to=0000-01-02", "to: must be in the year 1 or later"],
  ])("GET %s is a 400: %s", async (path, reason) => {
    const res = await read(path);
    expect({ status: res.status, message: res.error?.message.slice(0, `Invalid query: ${reason}`.length) }).toEqual({ status: 400, message: `Invalid query: ${reason}` });
  });

  it("refuses a key's expiry with an offset Postgres cannot read, as it refuses other impossible times", async () => {
    const res = await gw.call("POST", "/keys", { body: { name: "far east", expires_at: "2030-01-01T00:00:00+16:00" } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toContain("expires_at");
  });

  it("still reads the earliest and latest instants it can", async () => {
    expect((await read("/generations?from=0001-01-01T00:00:00Z&to=9999-12-31T23:59:59.999Z")).status).toBe(200);
    expect((await read("/generations?from=0001-01-01T00:00:00%2B15:59")).status).toBe(200);
    expect((await read("/activity/daily?from=9999-01-01&to=9999-12-31")).status).toBe(200);
  });
});

describe("cursors this list never gave", () => {
  const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  it.each([
    ["a bare number as the time", ["1", "x"]],
    ["a bare year", ["2026", "x"]],
    ["the year 0", ["0000-01-01T00:00:00Z", "x"]],
    ["a six-digit year", ["+275760-09-13T00:00:00.000Z", "x"]],
    ["a NUL in the id", ["2030-01-01T00:00:00.000000Z", "x\u0000"]],
    ["an offset Postgres refuses", ["2030-01-01T00:00:00+16:00", "x"]],
    ["an id longer than generation ids are", ["2030-01-01T00:00:00.000000Z", "x".repeat(300)]],
    ["a day that does not exist", ["2030-02-30T00:00:00.000000Z", "x"]],
    ["three members", ["2030-01-01T00:00:00.000000Z", "x", "y"]],
    ["an object", { at: "2030-01-01T00:00:00.000000Z", id: "x" }],
  ])("refuses %s with a 400", async (_, value) => {
    const encoded = cursor(value);
    expect(encoded.length).toBeLessThanOrEqual(512);
    const res = await read(`/generations?cursor=${encoded}`);
    expect({ status: res.status, message: res.error?.message }).toEqual({ status: 400, message: "Invalid query: cursor: not a cursor this list gave" });
  });
});

describe("a model id of 4 MiB", () => {
  const huge = `chat/${"x".repeat(4 * 1024 * 1024)}`;
  it.each([
    ["/chat/completions", { model: huge, messages: [{ role: "user", content: "hi" }] }, "model"],
    ["/chat/completions", { model: "chat/ok", models: ["chat/ok", huge], messages: [{ role: "user", content: "hi" }] }, "models.1"],
    ["/chat/completions", { model: `chat/ok:${"x".repeat(4 * 1024 * 1024)}`, messages: [{ role: "user", content: "hi" }] }, "model"],
    ["/responses", { model: huge, input: "hi" }, "model"],
    ["/completions", { model: huge, prompt: "hi" }, "model"],
    ["/messages", { model: huge, max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, "model"],
    ["/embeddings", { model: huge, input: "hi" }, "model"],
    ["/rerank", { model: huge, query: "q", documents: ["d"] }, "model"],
    ["/images", { model: huge, prompt: "a cat" }, "model"],
    ["/audio/speech", { model: huge, input: "hi", voice: "alloy" }, "model"],
    ["/presets", { slug: "huge-model", model: huge }, "model"],
  ])("POST %s is a short 400 naming the field (%#)", async (path, body, field) => {
    const as = path === "/presets" ? bootstrapKey : key;
    const res = await fetch(`${gw.apiUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${as}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    expect({ status: res.status, size: Buffer.byteLength(text) < 4096 }).toEqual({ status: 400, size: true });
    expect(text).toContain(`${field}: `);
  }, 30_000);
});
