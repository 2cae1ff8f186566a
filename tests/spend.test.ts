import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { spendCatalog } from "./support/spend-fixture.js";

/** Holds and the ledger, through the router: limits and budgets hold under concurrency, and spend is exact. */
let gw: TestGateway;
let alpha: FakeProvider;

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  gw = await startTestGateway(await catalogEnv(spendCatalog(alpha.baseUrl)));
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
});

const messages = [{ role: "user", content: "Say hello" }];
const newKey = async (body: Record<string, unknown> = {}) => {
  const created = await gw.call("POST", "/keys", { body: { name: "spender", ...body } });
  return { key: String(created.body.key), hash: String(created.body.data?.hash) };
};
const chat = (key: string, model: string, extra: Record<string, unknown> = {}) =>
  gw.call("POST", "/chat/completions", { key, body: { model, messages, ...extra } });
const keyRecord = async (hash: string) => (await gw.call("GET", `/keys/${hash}`)).body.data as Record<string, number | null>;
const usageReaches = (hash: string, usd: number) => eventually(async () => (await keyRecord(hash)).usage === usd, 5000);
const upstreamCalls = (model: string) => alpha.requests.filter((r) => r.body.model === model).length;

describe("key limits", () => {
  it("lets at most the remaining budget's worth of 50 concurrent requests reach a provider, then says the limit is used up", async () => {
    const { key, hash } = await newKey({ limit: 1 });
    expect((await chat(key, "spend/ninety-cents")).status).toBe(200);
    await usageReaches(hash, 0.9);
    expect((await keyRecord(hash)).limit_remaining).toBe(0.1);

    const before = upstreamCalls("cent");
    const answers = await Promise.all(Array.from({ length: 50 }, () => chat(key, "spend/cent")));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    // Refused: 402 while the last holds are unsettled, 403 once settled spend has reached the limit.
    expect(statuses.filter((s) => s === 402 || s === 403)).toHaveLength(40);
    expect(upstreamCalls("cent") - before).toBe(10);
    for (const refused of answers.filter((a) => a.status === 402)) expect(refused.body.error?.message).toMatch(/can only afford 0\./);

    await usageReaches(hash, 1);
    const settled = await keyRecord(hash);
    expect(settled).toMatchObject({ usage: 1, usage_daily: 1, usage_weekly: 1, usage_monthly: 1, limit_remaining: 0 });
    const exhausted = await chat(key, "spend/cent");
    expect(exhausted.status).toBe(403);
    expect(exhausted.body.error?.message).toBe("Key limit exceeded");
    const current = (await gw.call("GET", "/key", { key })).body.data as Record<string, unknown>;
    expect(current).toMatchObject({ usage: 1, limit: 1, limit_remaining: 0 });
  });

  it("answers 402 with the completion tokens the rest can pay for", async () => {
    const { key } = await newKey({ limit: 0.001 });
    const res = await chat(key, "spend/per-token", { max_tokens: 1000 });
    expect(res.status).toBe(402);
    // $0.001 at $0.00001 per completion token (the prompt is free): 100 tokens.
    expect(res.body.error?.message).toContain("You requested up to 1000 tokens, but can only afford 100.");
    expect((res.body.error as { metadata?: unknown }).metadata).toMatchObject({ limited_by: "key", requested_tokens: 1000, affordable_tokens: 100 });
    expect((await chat(key, "spend/per-token", { max_tokens: 100 })).status).toBe(200);
  });

  it("applies a changed limit to the very next request", async () => {
    const { key, hash } = await newKey({ limit: 0.005 });
    expect((await chat(key, "spend/cent")).status).toBe(402);
    expect((await gw.call("PATCH", `/keys/${hash}`, { body: { limit: 0.02 } })).status).toBe(200);
    expect((await chat(key, "spend/cent")).status).toBe(200);
    await usageReaches(hash, 0.01);
    expect((await gw.call("PATCH", `/keys/${hash}`, { body: { limit: 0.01 } })).status).toBe(200);
    expect((await chat(key, "spend/cent")).status).toBe(403);
  });

  it("releases the hold of a request whose provider failed before its first byte", async () => {
    const { key, hash } = await newKey({ limit: 0.01 });
    const failed = await chat(key, "spend/failing");
    expect(failed.status).toBe(502);
    // Only one worst case fits the limit: had the failed request kept its hold, this one would get 402.
    expect((await chat(key, "spend/cent")).status).toBe(200);
    await usageReaches(hash, 0.01);
  });
});

describe("guardrail budgets", () => {
  it("shares one budget between two keys under 50 concurrent requests", async () => {
    const guardrail = await gw.call("POST", "/guardrails", { body: { name: "five cents a day", limit_usd: 0.05, reset_interval: "daily" } });
    expect(guardrail.status).toBe(201);
    const id = String(guardrail.body.data?.id);
    const [a, b] = [await newKey(), await newKey()];
    expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [a.hash, b.hash] } })).status).toBe(200);
    const before = upstreamCalls("cent");
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => chat(i % 2 ? a.key : b.key, "spend/cent")));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(5);
    expect(answers.filter((r) => r.status === 402)).toHaveLength(45);
    expect(answers.find((r) => r.status === 402)?.body.error?.message).toContain(`guardrail ${id}`);
    expect(upstreamCalls("cent") - before).toBe(5);
    await eventually(async () => ((await keyRecord(a.hash)).usage ?? 0) + ((await keyRecord(b.hash)).usage ?? 0) >= 0.05, 5000);
    const total = Number((((await keyRecord(a.hash)).usage ?? 0) + ((await keyRecord(b.hash)).usage ?? 0)).toFixed(12));
    expect(total).toBe(0.05);
    await gw.call("DELETE", `/guardrails/${id}`);
  });
});

describe("what is charged", () => {
  it("charges a streamed and a buffered run of the same completion the same, and the ledger agrees with the generation", async () => {
    const { key, hash } = await newKey();
    const buffered = await chat(key, "spend/tokens");
    const streamed = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "spend/tokens", messages, stream: true }),
    });
    await streamed.text();
    const ids = [String(buffered.body.id), String(streamed.headers.get("x-generation-id"))];
    const costs = await Promise.all(ids.map(async (id) => Number((await gw.call("GET", `/generation?id=${id}`, { key })).body.data?.total_cost)));
    expect(costs[0]).toBeGreaterThan(0);
    expect(costs[1]).toBe(costs[0]);
    await usageReaches(hash, Number((costs[0]! * 2).toFixed(12)));
  });

  it("charges a provider that sends no usage a non-zero estimate", async () => {
    const { key, hash } = await newKey();
    const res = await chat(key, "spend/no-usage");
    expect(res.status).toBe(200);
    await eventually(async () => ((await keyRecord(hash)).usage ?? 0) > 0, 5000);
  });
});
