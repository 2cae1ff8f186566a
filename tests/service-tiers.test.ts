import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

/**
 * `service_tier` changes what a provider bills: a request for a tier priced apart goes only to endpoints
 * whose catalog entry prices it, is held at that tier's prices, and is charged at the tier the provider
 * says it served.
 */
let gw: TestGateway;
let stopUpstream: () => Promise<void>;
const seen: Array<Record<string, unknown>> = [];
/** What the fake says it served: the tier asked for, except `default` for the model `downgrades`. */
const served = (body: Record<string, unknown>) => (body.model === "downgrades" ? "default" : (body.service_tier ?? "default"));

beforeAll(async () => {
  const openai = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      seen.push(body);
      const usage = { prompt_tokens: 10, completion_tokens: 100, total_tokens: 110 };
      const answer = { id: "c1", object: "chat.completion", created: 1, model: body.model, service_tier: served(body), choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  });
  const upstream = await listenLocal(openai);
  stopUpstream = upstream.stop;
  const pricing = { prompt: "0.000002", completion: "0.000008" };
  const service_tiers = { flex: { prompt: "0.000001", completion: "0.000004" }, priority: { prompt: "0.000004", completion: "0.000016" } };
  const model = (id: string, upstreamModel: string) => ({ id, name: id, context_length: 10_000, endpoints: [{ provider: "oa", upstream_model: upstreamModel, pricing, service_tiers, max_completion_tokens: 1000 }] });
  const catalog = {
    providers: [{ slug: "oa", name: "OpenAI", adapter: "openai", base_url: upstream.baseUrl, requires_api_key: false }],
    models: [model("tier/m", "m"), model("tier/downgrades", "downgrades")],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
});
afterAll(async () => {
  await gw?.stop();
  await stopUpstream?.();
});

const messages = [{ role: "user", content: "hello" }];
const newKey = async (limit?: number) => String((await gw.call("POST", "/keys", { body: { name: "tiers", ...(limit === undefined ? {} : { limit }) } })).body.key);
const costAt = (prompt: number, completion: number) => 10 * prompt + 100 * completion;

describe("service tiers", () => {
  it.each([
    ["standard", undefined, costAt(0.000002, 0.000008)],
    ["flex", "flex", costAt(0.000001, 0.000004)],
    ["priority", "priority", costAt(0.000004, 0.000016)],
    ["fast, OpenRouter's name for priority,", "fast", costAt(0.000004, 0.000016)],
  ])("charges a request served at the %s tier at its prices", async (_, tier, cost) => {
    const key = await newKey();
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "tier/m", messages, max_tokens: 100, ...(tier ? { service_tier: tier } : {}) } });
    expect(res.status).toBe(200);
    expect(seen.at(-1)!.service_tier).toBe(tier === "fast" ? "priority" : tier);
    expect((res.body.usage as { cost: number }).cost).toBeCloseTo(cost, 12);
    await eventually(async () => (await gw.call("GET", `/generation?id=${String(res.body.id)}`, { key })).status === 200, 5000);
    expect((await gw.call("GET", `/generation?id=${String(res.body.id)}`, { key })).body.data?.total_cost).toBeCloseTo(cost, 12);
  });

  it("charges the standard prices when the provider says it served the standard tier", async () => {
    const res = await gw.call("POST", "/chat/completions", { key: await newKey(), body: { model: "tier/downgrades", messages, max_tokens: 100, service_tier: "priority" } });
    expect((res.body.usage as { cost: number }).cost).toBeCloseTo(costAt(0.000002, 0.000008), 12);
  });

  it("refuses a tier no endpoint prices, and holds a tier's worst case at its prices, or the dearest a provider may choose", async () => {
    const before = seen.length;
    const scale = await gw.call("POST", "/chat/completions", { key: await newKey(), body: { model: "tier/m", messages, max_tokens: 100, service_tier: "scale" } });
    expect(scale.status).toBe(400);
    expect(scale.body.error?.message).toContain("no scale price for service_tier");
    expect(seen.length).toBe(before);
    // The worst case at standard prices is about $0.0009 (the prompt's bytes and 100 tokens), at priority twice that.
    const key = await newKey(0.0012);
    const priority = await gw.call("POST", "/chat/completions", { key, body: { model: "tier/m", messages, max_tokens: 100, service_tier: "priority" } });
    expect(priority.status).toBe(402);
    // Without a tier (or with auto) the provider may serve priority and the charge follows it: held so.
    const unasked = await gw.call("POST", "/chat/completions", { key, body: { model: "tier/m", messages, max_tokens: 100 } });
    expect(unasked.status).toBe(402);
    const standard = await gw.call("POST", "/chat/completions", { key, body: { model: "tier/m", messages, max_tokens: 100, service_tier: "default" } });
    expect(standard.status).toBe(200);
  });
});
