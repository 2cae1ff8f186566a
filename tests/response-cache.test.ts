import OpenAI from "openai";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let alpha: FakeProvider;
let key: string;
let workspaceId: string;

const pricing = { prompt: "0.000001", completion: "0.000002" };
const messages = [{ role: "user" as const, content: "Say hello" }];
const cached = { "X-OpenRouter-Cache": "true" };

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  const catalog = {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, api_key_env: "ALPHA_KEY" }],
    models: [
      { id: "cache/ok", name: "Cached", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing, supported_parameters: ["temperature"] }] },
      { id: "cache/other", name: "Other", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing }] },
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), RESPONSE_CACHE_MAX_TTL_SECONDS: "3600", RESPONSE_CACHE_PURGE_INTERVAL_MS: "1000" });
  const workspace = await gw.call("POST", "/workspaces", { body: { name: "Cache", slug: "cache" } });
  workspaceId = String(workspace.body.data?.id);
  key = await newKey(workspaceId);
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
});

/** Each key's hash, by its secret, for guardrail assignments. */
const hashes = new Map<string, string>();

async function newKey(workspace: string): Promise<string> {
  const created = await gw.call("POST", "/keys", { body: { name: "cache", workspace_id: workspace } });
  expect(created.status).toBe(201);
  hashes.set(String(created.body.key), String(created.body.data?.hash));
  return String(created.body.key);
}

const chat = (body: Record<string, unknown>, headers: Record<string, string> = cached, as = key) =>
  gw.call("POST", "/chat/completions", { key: as, body: { model: "cache/ok", messages, ...body }, headers });
const generation = async (id: string) => (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as Record<string, unknown>;
const calls = () => alpha.requests.length;

describe("response cache, buffered chat completions", () => {
  it("answers a repeated request from the cache: HIT header, zero usage and cost, its own generation record, no provider call", async () => {
    const before = calls();
    const first = await chat({ temperature: 0.1 });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-openrouter-cache-status")).toBe("MISS");
    expect(first.headers.get("x-openrouter-cache-ttl")).toBe("300");
    expect((first.body.usage as { cost: number }).cost).toBeCloseTo(0.000022, 12);
    expect(calls()).toBe(before + 1);
    // Provider metrics count generations that reached a provider: a hit is not one.
    const served = async () =>
      (await (await fetch(`${gw.baseUrl}/metrics`)).text())
        .split("\n")
        .filter((line) => line.startsWith("switchyard_generations_total{") && line.includes('model="cache/ok"'))
        .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
    const servedBefore = await served();
    expect(servedBefore).toBeGreaterThan(0);

    // The same request with its keys in another order and stream_options is the same request.
    const second = await gw.call("POST", "/chat/completions", {
      key,
      body: { stream_options: { include_usage: true }, temperature: 0.1, messages, model: "cache/ok" },
      headers: cached,
    });
    expect(second.status).toBe(200);
    expect(second.headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(calls()).toBe(before + 1);
    const answer = second.body as { id: string; model: string; choices: Array<{ message: { content: string } }>; usage: Record<string, unknown> };
    expect(answer.choices[0]?.message.content).toBe("Hello from alpha");
    expect(answer.model).toBe("cache/ok");
    expect(answer.id).not.toBe(first.body.id);
    expect(second.headers.get("x-generation-id")).toBe(answer.id);
    expect(answer.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 });

    await eventually(async () => (await gw.call("GET", `/generation?id=${answer.id}`, { key })).status === 200, 3000);
    const record = await generation(answer.id);
    expect(record).toMatchObject({ id: answer.id, model: "cache/ok", provider_name: "alpha", tokens_prompt: 0, tokens_completion: 0, total_cost: 0, cache_source_id: first.body.id });
    // No provider was called: the record names no upstream id (the original's stays on the original).
    expect(record.upstream_id).toBeNull();
    const original = await generation(String(first.body.id));
    expect(original.total_cost).toBeCloseTo(0.000022, 12);
    expect(original.cache_source_id).toBeUndefined();
    expect(await served()).toBe(servedBefore);
    const metrics = await (await fetch(`${gw.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/switchyard_response_cache_requests_total\{[^}]*endpoint="chat"[^}]*status="HIT"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/switchyard_response_cache_requests_total\{[^}]*endpoint="chat"[^}]*status="MISS"[^}]*\} [1-9]/);
  });

  it("replays through the openai client, and leaves requests without the header to the provider without cache headers", async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0, defaultHeaders: cached });
    const params = { model: "cache/ok", messages: [{ role: "user" as const, content: "Through the SDK" }] };
    await openai.chat.completions.create(params);
    const before = calls();
    const { data, response } = await openai.chat.completions.create(params).withResponse();
    expect(response.headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(data.choices[0]?.message.content).toBe("Hello from alpha");
    expect(calls()).toBe(before);

    const plain = await chat({ messages: [{ role: "user", content: "Through the SDK" }] }, {});
    expect(plain.status).toBe(200);
    expect(plain.headers.get("x-openrouter-cache-status")).toBeNull();
    expect(calls()).toBe(before + 1);
    // Asking for no caching is the same as not asking.
    const off = await chat({ messages: [{ role: "user", content: "Through the SDK" }] }, { "X-OpenRouter-Cache": "false" });
    expect(off.headers.get("x-openrouter-cache-status")).toBeNull();
    expect(calls()).toBe(before + 2);
  });

  it("misses on another model, other parameters or other messages", async () => {
    await chat({ temperature: 0.4 });
    for (const body of [{ temperature: 0.5 }, { temperature: 0.4, model: "cache/other" }, { temperature: 0.4, messages: [{ role: "user", content: "Say goodbye" }] }]) {
      const before = calls();
      const res = await chat(body);
      expect(res.headers.get("x-openrouter-cache-status")).toBe("MISS");
      expect(calls()).toBe(before + 1);
    }
  });

  it("is scoped to the workspace: another key of the workspace hits, a key of another workspace misses", async () => {
    await chat({ temperature: 0.6 });
    const sameWorkspace = await newKey(workspaceId);
    const before = calls();
    expect((await chat({ temperature: 0.6 }, cached, sameWorkspace)).headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(calls()).toBe(before);

    const other = await gw.call("POST", "/workspaces", { body: { name: "Elsewhere", slug: "cache-elsewhere" } });
    const otherKey = await newKey(String(other.body.data?.id));
    const res = await chat({ temperature: 0.6 }, cached, otherKey);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-openrouter-cache-status")).toBe("MISS");
    expect(calls()).toBe(before + 1);
    // Its own answer is now kept for its own workspace.
    expect((await chat({ temperature: 0.6 }, cached, otherKey)).headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(calls()).toBe(before + 1);
  });

  it("still applies the key's guardrails to a request the cache could answer", async () => {
    await chat({ temperature: 0.7 });
    const barred = await newKey(workspaceId);
    const guardrail = await gw.call("POST", "/guardrails", { body: { name: "no cache/ok", ignored_models: ["cache/ok"], workspace_id: workspaceId } });
    expect(guardrail.status).toBe(201);
    await gw.call("POST", `/guardrails/${String(guardrail.body.data?.id)}/assignments/keys`, { body: { key_hashes: [hashes.get(barred)] } });
    const res = await chat({ temperature: 0.7 }, cached, barred);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.headers.get("x-openrouter-cache-status")).toBeNull();
  });

  it("is turned off for the keys of a guardrail with disable_response_cache: BYPASS, never read nor written", async () => {
    const keyOff = await newKey(workspaceId);
    const guardrail = await gw.call("POST", "/guardrails", { body: { name: "no cache", disable_response_cache: true, workspace_id: workspaceId } });
    expect(guardrail.status).toBe(201);
    expect(guardrail.body.data?.disable_response_cache).toBe(true);
    await gw.call("POST", `/guardrails/${String(guardrail.body.data?.id)}/assignments/keys`, { body: { key_hashes: [hashes.get(keyOff)] } });

    // What the workspace kept is not served to that key, and what that key asks is not kept.
    await chat({ temperature: 0.8 });
    const before = calls();
    for (let i = 0; i < 2; i++) {
      const res = await chat({ temperature: 0.8 }, cached, keyOff);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-openrouter-cache-status")).toBe("BYPASS");
      expect((res.body.usage as { cost: number }).cost).toBeGreaterThan(0);
    }
    expect(calls()).toBe(before + 2);
    const fresh = { temperature: 0.9 };
    await chat(fresh, cached, keyOff);
    expect((await chat(fresh)).headers.get("x-openrouter-cache-status")).toBe("MISS");

    // Turned back on, the key uses the cache again.
    const off = await gw.call("PATCH", `/guardrails/${String(guardrail.body.data?.id)}`, { body: { disable_response_cache: false } });
    expect(off.body.data?.disable_response_cache).toBe(false);
    await eventually(async () => (await chat({ temperature: 0.8 }, cached, keyOff)).headers.get("x-openrouter-cache-status") === "HIT", 3000);
  });
});

describe("response cache TTL", () => {
  it("takes X-OpenRouter-Cache-TTL and expires the answer after it", async () => {
    const body = { messages: [{ role: "user", content: "Short-lived" }] };
    const headers = { ...cached, "X-OpenRouter-Cache-TTL": "1" };
    const first = await chat(body, headers);
    expect(first.headers.get("x-openrouter-cache-ttl")).toBe("1");
    expect((await chat(body, headers)).headers.get("x-openrouter-cache-status")).toBe("HIT");
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const before = calls();
    const after = await chat(body, headers);
    expect(after.headers.get("x-openrouter-cache-status")).toBe("MISS");
    expect(calls()).toBe(before + 1);
  });

  it.runIf(testEnv.databaseUrl)("purges expired answers periodically", async () => {
    const body = { messages: [{ role: "user", content: "Purged soon" }] };
    await chat(body, { ...cached, "X-OpenRouter-Cache-TTL": "1" });
    const client = new pg.Client({ connectionString: gw.databaseUrl });
    await client.connect();
    try {
      const count = async () => Number((await client.query<{ n: string }>("SELECT count(*)::text AS n FROM inference.response_cache WHERE expires_at <= now() + interval '1 second'")).rows[0]!.n);
      expect(await count()).toBeGreaterThan(0);
      await eventually(async () => (await count()) === 0, 3000);
    } finally {
      await client.end();
    }
  });

  it("refuses a TTL or a flag it cannot read with 400, before calling a provider", async () => {
    const before = calls();
    for (const ttl of ["0", "-1", "2.5", "soon", "3601"]) {
      const res = await chat({}, { ...cached, "X-OpenRouter-Cache-TTL": ttl });
      expect(res.status, ttl).toBe(400);
      expect(res.body.error).toMatchObject({ code: 400 });
      expect(res.body.error?.message).toContain("X-OpenRouter-Cache-TTL");
    }
    const flag = await chat({}, { "X-OpenRouter-Cache": "maybe" });
    expect(flag.status).toBe(400);
    expect(flag.body.error?.message).toContain("X-OpenRouter-Cache");
    expect(calls()).toBe(before);
  });
});
