import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/** The standalone gateway's JSON log lines, as a log shipper reads them. */
let gw: TestGateway;
let provider: FakeProvider;
let logs = "";
const lines = () => logs.split("\n").filter(Boolean);

beforeAll(async () => {
  provider = await startFakeProvider("alpha");
  const stream = new PassThrough();
  stream.on("data", (chunk: Buffer) => (logs += chunk.toString("utf8")));
  gw = await startTestGateway(
    {
      ...(await catalogEnv({
        providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: provider.baseUrl, requires_api_key: false }],
        models: [{ id: "chat/ok", name: "ok", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: { prompt: "0.00001", completion: "0.00003" } }] }],
      })),
    },
    { logs: stream },
  );
});
afterAll(async () => {
  await gw?.stop();
  await provider?.stop();
});

describe("standalone logs", () => {
  it("name each line's service once: a JSON line never repeats a key", async () => {
    await eventually(async () => logs.includes("identity migrations applied"), 5000);
    expect(lines().length).toBeGreaterThan(5);
    const services = new Set<string>();
    for (const line of lines()) {
      // JSON.parse keeps the last of repeated keys; a shipper may keep the first, or refuse the line.
      expect(line.match(/"service":/g) ?? [], line).toHaveLength(1);
      services.add((JSON.parse(line) as { service: string }).service);
    }
    expect([...services]).toEqual(expect.arrayContaining(["standalone", "identity", "catalog", "inference", "media"]));
  });

  it("give every API request one line at info: its key, route, status and duration, and the generation it made", async () => {
    const made = await gw.call("POST", "/keys", { body: { name: "logged" } });
    const key = String(made.body.key);
    const hash = String(made.body.data!.hash);
    for (const stream of [false, true]) {
      const res = await fetch(`${gw.apiUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-request-id": `logged-${stream}` },
        body: JSON.stringify({ model: "chat/ok", stream, messages: [{ role: "user", content: "hi" }] }),
      });
      const generationId = res.headers.get("x-generation-id");
      await res.text();
      const mine = () => lines().map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.reqId === `logged-${stream}` && l.msg === "request completed");
      await eventually(async () => mine().length > 0, 5000);
      expect(mine()).toEqual([
        expect.objectContaining({
          level: 30,
          req: { method: "POST", url: "/api/v1/chat/completions" },
          res: { statusCode: 200 },
          key: hash.slice(0, 12),
          model: "chat/ok",
          provider: "alpha",
          generationId,
          promptTokens: 12,
          completionTokens: 5,
          // 12 × $0.00001 + 5 × $0.00003, as the fake provider reports its usage.
          cost: expect.closeTo(0.00027, 12),
          responseTime: expect.any(Number),
        }),
      ]);
    }
    // A request without a generation still has its line, with the key that made it.
    const listed = await gw.call("GET", "/key", { key, headers: { "x-request-id": "logged-key" } });
    expect(listed.status).toBe(200);
    await eventually(async () => lines().some((l) => l.includes('"reqId":"logged-key"') && l.includes('"msg":"request completed"')), 5000);
    const line = JSON.parse(lines().find((l) => l.includes('"reqId":"logged-key"') && l.includes("request completed"))!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 30, key: hash.slice(0, 12), res: { statusCode: 200 } });
    expect(line).not.toHaveProperty("generationId");
    expect(logs).not.toContain(key);
    // The path without its query: a client may put a credential there (Gemini's ?key=).
    expect((await gw.call("GET", `/key?key=${key}&api_key=query-secret`, { key, headers: { "x-request-id": "logged-query" } })).status).toBe(200);
    await eventually(async () => lines().some((l) => l.includes('"reqId":"logged-query"') && l.includes("request completed")), 5000);
    const queried = JSON.parse(lines().find((l) => l.includes('"reqId":"logged-query"') && l.includes("request completed"))!) as Record<string, unknown>;
    expect(queried).toMatchObject({ req: { method: "GET", url: "/api/v1/key" } });
    expect(logs).not.toContain("query-secret");
    expect(logs).not.toContain(key);
  });
});
