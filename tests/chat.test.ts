import { gzipSync } from "node:zlib";
import { OpenRouter } from "@openrouter/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let alpha: FakeProvider;
let beta: FakeProvider;
let key: string;
let openai: OpenAI;

const cheap = { prompt: "0.000001", completion: "0.000002" };
const dear = { prompt: "0.000002", completion: "0.000004" };
const model = (id: string, endpoints: Array<[string, string, typeof cheap]>) => ({
  id,
  name: id,
  context_length: 8000,
  endpoints: endpoints.map(([provider, upstream, pricing]) => ({ provider, upstream_model: upstream, pricing, service_tiers: { priority: pricing }, supported_parameters: ["temperature"] })),
});

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  beta = await startFakeProvider("beta");
  const catalog = {
    providers: [
      { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, api_key_env: "ALPHA_KEY" },
      { slug: "beta", name: "Beta", adapter: "openai-compatible", base_url: beta.baseUrl },
    ],
    models: [
      model("chat/ok", [["alpha", "ok", cheap], ["beta", "ok", dear]]),
      model("chat/fallback", [["alpha", "fail-500", cheap], ["beta", "ok", dear]]),
      model("chat/reset", [["alpha", "reset", cheap], ["beta", "ok", dear]]),
      model("chat/limited", [["alpha", "rate-limited", cheap], ["beta", "ok", dear]]),
      model("chat/bad", [["alpha", "bad-request", cheap], ["beta", "bad-request", dear]]),
      model("chat/nousage", [["alpha", "no-usage", cheap]]),
      model("chat/cut", [["alpha", "cut", cheap]]),
      model("chat/stall", [["alpha", "stall", cheap]]),
      model("chat/other", [["beta", "ok", dear]]),
      model("chat/json", [["alpha", "malformed-json", cheap]]),
      { ...model("chat/small", [["alpha", "ok", cheap]]), context_length: 300 },
    ],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  key = String((await gw.call("POST", "/keys", { body: { name: "chat" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl });
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
  await beta?.stop();
});

const messages = [{ role: "user" as const, content: "Say hello" }];
const generation = async (id: string) => (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as Record<string, unknown>;

describe("POST /chat/completions, buffered", () => {
  it("answers through the openai client with priced usage, a generation id and a stored generation", async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: "chat/ok:floor", messages, temperature: 0.3, user: "end-user-7" })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe("Hello from alpha");
    expect(data.model).toBe("chat/ok");
    const usage = data.usage as unknown as { cost: number; is_byok: boolean; prompt_tokens: number };
    expect(usage.prompt_tokens).toBe(12);
    // 12 prompt tokens × $0.000001 + 5 completion tokens × $0.000002
    expect(usage.cost).toBeCloseTo(0.000022, 12);
    const id = response.headers.get("x-generation-id");
    expect(id).toBe(data.id);
    const upstream = alpha.requests.at(-1)!;
    expect(upstream.authorization).toBe("Bearer alpha-secret");
    expect(upstream.body).toMatchObject({ model: "ok", temperature: 0.3, messages });
    expect(upstream.body.user).toMatch(/^[0-9a-f]{32}$/); // never the raw end-user id
    const stored = await generation(id!);
    expect(stored).toMatchObject({ model: "chat/ok", provider_name: "alpha", tokens_prompt: 12, tokens_completion: 5, streamed: false, finish_reason: "stop" });
    expect(stored.total_cost).toBeCloseTo(0.000022, 12);
  });

  it("keeps the top-level prompt-cache markers, Anthropic's idea, from an OpenAI-compatible provider", async () => {
    const body = { model: "chat/ok:floor", messages, cache_control: { type: "ephemeral" }, prompt_cache_options: { mode: "explicit" }, prompt_cache_key: "k-1" };
    const res = await gw.call("POST", "/chat/completions", { key, body });
    expect(res.status).toBe(200);
    const upstream = alpha.requests.at(-1)!.body;
    expect(upstream).toMatchObject({ model: "ok", messages, prompt_cache_key: "k-1", stream: false });
    expect(Object.keys(upstream)).not.toContain("cache_control");
    expect(Object.keys(upstream)).not.toContain("prompt_cache_options");
  });

  it("passes the @openrouter/sdk's response validation, with routing metadata when asked", async () => {
    const client = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
    const alphaFirst = { order: ["alpha", "beta"] };
    // The first answer comes after alpha's 500, which rests alpha: the second goes to beta at once.
    const raw = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/fallback", messages, provider: alphaFirst }, headers: { "x-openrouter-metadata": "enabled" } });
    expect(raw.body.openrouter_metadata).toMatchObject({ attempt: 2, strategy: "fallback", requested: "chat/fallback", endpoints: { total: 2 } });
    expect(raw.body.system_fingerprint).toBe("fp_fake");
    const result = await client.chat.send({ chatRequest: { model: "chat/fallback", messages, provider: alphaFirst } }, { headers: { "X-OpenRouter-Metadata": "enabled" } });
    if (Symbol.asyncIterator in result) throw new Error("expected a buffered completion");
    expect(result.choices[0]?.message.content).toBe("Hello from beta");
  });

  it("retries on another endpoint when the connection drops before an answer", async () => {
    const before = alpha.requests.length;
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/reset", messages, provider: { sort: "price" } }, headers: { "x-openrouter-metadata": "enabled" } });
    expect(res.status).toBe(200);
    expect(res.body.choices).toMatchObject([{ message: { content: "Hello from beta" } }]);
    expect(res.body.openrouter_metadata).toMatchObject({ attempt: 2 });
    expect(alpha.requests.length - before).toBe(1);
  });

  it("falls back past a 429 and rests that provider for its Retry-After", async () => {
    const before = alpha.requests.length;
    const first = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/limited", messages, provider: { sort: "price" } } });
    expect(first.status).toBe(200);
    expect(first.body.choices).toMatchObject([{ message: { content: "Hello from beta" } }]);
    const tried = alpha.requests.length - before;
    expect(tried).toBe(1);
    const second = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/limited", messages, provider: { sort: "price" } } });
    expect(second.status).toBe(200);
    // alpha's endpoint is cheaper but resting: the second request goes to beta without asking it again.
    expect(alpha.requests.length - before).toBe(tried);
  });

  it("moves to the next model of `models` on every error, and reports a provider's refusal when none remain", async () => {
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/bad", models: ["chat/other"], messages } });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe("chat/other");
    const refused = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/bad", messages } });
    expect(refused.status).toBe(400);
    expect(refused.body.error?.message).toBe("Provider rejected the request");
  });

  it("estimates usage when the provider sends none, so the work is never free", async () => {
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/nousage", messages } });
    expect(res.status).toBe(200);
    const usage = res.body.usage as { prompt_tokens: number; completion_tokens: number; cost: number };
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.cost).toBeGreaterThan(0);
  });

  it("aborts the upstream request when the client goes away", async () => {
    const before = alpha.aborted;
    const controller = new AbortController();
    const pending = fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chat/stall", messages }),
      signal: controller.signal,
    }).catch(() => undefined);
    await eventually(async () => alpha.requests.some((r) => r.body.model === "stall"), 2000);
    controller.abort();
    await pending;
    expect(await eventually(async () => alpha.aborted > before, 1000)).toBeLessThan(1000);
  });

  it("rejects invalid requests, management keys and unknown models", async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ model: "chat/ok", messages: [] }, 400, /messages/],
      [{ model: "chat/ok", messages, temperature: 3 }, 400, /temperature/],
      [{ model: "chat/ok", messages, stop: ["a", "b", "c", "d", "e"] }, 400, /stop/],
      [{ messages }, 400, /model/],
      [{ model: "chat/missing", messages }, 404, /not found/],
      [{ model: "chat/ok:turbo", messages }, 400, /variant/],
      [{ model: "chat/ok", messages, provider: { only: ["nobody"] } }, 400, /provider\.only\[0\]/],
    ];
    for (const [body, status, message] of cases) {
      const res = await gw.call("POST", "/chat/completions", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error?.message).toMatch(message);
    }
    const management = await gw.call("POST", "/chat/completions", { body: { model: "chat/ok", messages } });
    expect(management.status).toBe(403);
  });

  it("reads every form of body and path express would: bad JSON, no JSON, gzip, another case, a trailing slash", async () => {
    const send = (path: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
      fetch(`${gw.apiUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body }).then(
        async (r) => ({ status: r.status, body: (await r.json()) as { error?: { message: string }; choices?: unknown[] } }),
      );
    expect(await send("/chat/completions", "{not json")).toEqual({ status: 400, body: { error: { code: 400, message: "Invalid JSON body" } } });
    expect((await send("/chat/completions", "model=chat/ok", { "content-type": "application/x-www-form-urlencoded" })).status).toBe(400);
    const json = JSON.stringify({ model: "chat/ok", messages });
    expect((await send("/chat/completions", gzipSync(json), { "content-encoding": "gzip" })).body.choices).toHaveLength(1);
    expect((await send("/CHAT/Completions/", json)).body.choices).toHaveLength(1);
  });
});

describe("plugins, parameters and presets", () => {
  it("heals malformed JSON when response-healing is on and a JSON format was asked for", async () => {
    const body = { model: "chat/json", messages, response_format: { type: "json_object" } };
    const raw = await gw.call("POST", "/chat/completions", { key, body });
    const rawContent = (raw.body.choices as Array<{ message: { content: string } }>)[0]!.message.content;
    expect(() => JSON.parse(rawContent)).toThrow();
    const healed = await gw.call("POST", "/chat/completions", { key, body: { ...body, plugins: [{ id: "response-healing" }] } });
    expect(JSON.parse((healed.body.choices as Array<{ message: { content: string } }>)[0]!.message.content)).toEqual({ answer: 42, items: [1, 2] });
    const unknown = await gw.call("POST", "/chat/completions", { key, body: { ...body, plugins: [{ id: "telepathy" }] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error?.message).toMatch(/unknown plugin id telepathy/);
  });

  it("trims the middle of a conversation that does not fit when context-compression is on", async () => {
    const long = [
      { role: "system", content: "rules" },
      { role: "user", content: "first" },
      ...Array.from({ length: 12 }, (_, i) => ({ role: i % 2 ? "user" : "assistant", content: "x".repeat(200) })),
      { role: "user", content: "latest" },
    ];
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/small", messages: long, plugins: [{ id: "context-compression" }] } });
    expect(res.status).toBe(200);
    const sent = alpha.requests.at(-1)!.body.messages as Array<{ content: string }>;
    expect(sent.length).toBeLessThan(long.length);
    expect(sent.map((m) => m.content).slice(0, 2)).toEqual(["rules", "first"]);
    expect(sent.at(-1)?.content).toBe("latest");
  });

  it("drops parameters the endpoint does not support and says so in the metadata", async () => {
    const res = await gw.call("POST", "/chat/completions", {
      key,
      body: { model: "chat/ok:floor", messages, top_k: 3, temperature: 0.5 },
      headers: { "x-openrouter-metadata": "enabled" },
    });
    expect(alpha.requests.at(-1)!.body).not.toHaveProperty("top_k");
    expect(alpha.requests.at(-1)!.body.temperature).toBe(0.5);
    expect((res.body.openrouter_metadata as { summary: string }).summary).toMatch(/unsupported parameters dropped: top_k/);
    const strict = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/ok", messages, top_k: 3, provider: { require_parameters: true } } });
    expect(strict.status).toBe(404);
    expect(strict.body.error?.message).toMatch(/does not support top_k/);
  });

  it("runs a preset's designated version: its model, system prompt and parameters, overridden by the request", async () => {
    const saved = await gw.call("POST", "/presets/greeter/chat/completions", {
      body: { model: "chat/ok:floor", temperature: 0.1, messages: [{ role: "system", content: "You greet people." }] },
    });
    expect(saved.status).toBe(200);
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "@preset/greeter", messages, temperature: 0.7 } });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe("chat/ok");
    const sent = alpha.requests.at(-1)!.body;
    expect(sent.temperature).toBe(0.7);
    expect((sent.messages as Array<{ role: string; content: string }>)[0]).toEqual({ role: "system", content: "You greet people." });
    // The `preset` field does the same; a model given beside it wins over the preset's model.
    const viaField = await gw.call("POST", "/chat/completions", { key, body: { preset: "greeter", messages } });
    expect(viaField.body.model).toBe("chat/ok");
    const overridden = await gw.call("POST", "/chat/completions", { key, body: { preset: "greeter", model: "chat/other", messages } });
    expect(overridden.body.model).toBe("chat/other");
    expect((beta.requests.at(-1)!.body.messages as Array<{ content: string }>)[0]?.content).toBe("You greet people.");
    expect(beta.requests.at(-1)!.body.temperature).toBe(0.1);
  });
});

describe("presets' routing and request fields", () => {
  it("applies a preset's provider preferences and models, lets the request's win, and records the preset on the generation", async () => {
    const saved = await gw.call("POST", "/presets/beta-only/chat/completions", {
      body: { model: "chat/ok", provider: { only: ["beta"] }, session_id: "preset-session", messages: [] },
    });
    expect(saved.status).toBe(200);
    const presetId = String((await gw.call("GET", "/presets/beta-only")).body.data?.id);
    const before = { alpha: alpha.requests.length, beta: beta.requests.length };
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await gw.call("POST", "/chat/completions", { key, body: { preset: "beta-only", messages } });
      expect(res.status).toBe(200);
      ids.push(String(res.body.id));
    }
    expect({ alpha: alpha.requests.length - before.alpha, beta: beta.requests.length - before.beta }).toEqual({ alpha: 0, beta: 8 });
    await eventually(async () => (await gw.call("GET", `/generation?id=${ids[0]}`, { key })).status === 200, 5000);
    const generation = (await gw.call("GET", `/generation?id=${ids[0]}`, { key })).body.data;
    expect(generation).toMatchObject({ preset_id: presetId, session_id: "preset-session" });
    // The request's own provider preferences replace the preset's.
    const own = await gw.call("POST", "/chat/completions", { key, body: { preset: "beta-only", messages, provider: { only: ["alpha"] } } });
    expect(own.status).toBe(200);
    expect(alpha.requests.length - before.alpha).toBe(1);
  });
});

describe("who asked, on the generation", () => {
  it("records the end user, metadata and the app of HTTP-Referer and X-Title, as /generation shows them", async () => {
    const client = new OpenAI({
      apiKey: key,
      baseURL: gw.apiUrl,
      maxRetries: 0,
      defaultHeaders: { "HTTP-Referer": "https://app.example.com/chat", "X-Title": "Example App" },
    });
    const answer = await client.chat.completions.create({ model: "chat/ok", messages, user: "user-42", metadata: { ticket: "T-9" } });
    await eventually(async () => (await gw.call("GET", `/generation?id=${answer.id}`, { key })).status === 200, 5000);
    const generation = (await gw.call("GET", `/generation?id=${answer.id}`, { key })).body.data!;
    expect(generation).toMatchObject({
      external_user: "user-42",
      http_referer: "https://app.example.com/chat",
      origin: "https://app.example.com",
      app_title: "Example App",
      metadata: { ticket: "T-9" },
    });
    expect(typeof generation.app_id).toBe("number");
    expect(String(generation.user_agent)).toMatch(/OpenAI/);
    // The same app is the same app_id; the end user never reaches the provider raw.
    const again = await client.chat.completions.create({ model: "chat/ok", messages });
    await eventually(async () => (await gw.call("GET", `/generation?id=${again.id}`, { key })).status === 200, 5000);
    expect((await gw.call("GET", `/generation?id=${again.id}`, { key })).body.data!.app_id).toBe(generation.app_id);
    expect([...alpha.requests, ...beta.requests].some((r) => JSON.stringify(r.body).includes("user-42"))).toBe(false);
  });
});

describe("POST /chat/completions, streamed", () => {
  it("streams deltas, a finish chunk, a final usage chunk and [DONE] to the openai client", async () => {
    const stream = await openai.chat.completions.create({ model: "chat/ok:floor", messages, stream: true });
    let text = "";
    let finish: string | null = null;
    let cost = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) cost = (chunk.usage as unknown as { cost: number }).cost;
    }
    expect(text).toBe("Hello from alpha");
    expect(finish).toBe("stop");
    expect(cost).toBeCloseTo(0.000022, 12);
  });

  it("passes the @openrouter/sdk's stream validation", async () => {
    const client = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
    const stream = await client.chat.send({ chatRequest: { model: "chat/fallback", messages, stream: true } });
    if (!(Symbol.asyncIterator in stream)) throw new Error("expected a stream");
    let text = "";
    let usageSeen = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) usageSeen = true;
    }
    expect(text).toBe("Hello from beta");
    expect(usageSeen).toBe(true);
  });

  it("echoes the upstream body on request, maps service_tier fast to priority, and refuses echo without a stream", async () => {
    const res = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chat/ok:floor", messages, stream: true, service_tier: "fast", debug: { echo_upstream_body: true } }),
    });
    const frames = (await res.text()).split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)) as Record<string, unknown>);
    expect(frames[0]).toMatchObject({ choices: [], debug: { echo_upstream_body: { model: "ok", service_tier: "priority", messages } } });
    expect(alpha.requests.at(-1)!.body.service_tier).toBe("priority");
    // What the provider received, as it received it: the answer mode the adapter adds included.
    expect((frames[0]!.debug as Record<string, unknown>).echo_upstream_body).toEqual(alpha.requests.at(-1)!.body);
    const refused = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/ok", messages, debug: { echo_upstream_body: true } } });
    expect(refused.status).toBe(400);
  });

  it("ends a stream cut mid-way with one in-band error frame and still accounts the spend", async () => {
    const res = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chat/cut", messages, stream: true }),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get("x-generation-id")!;
    const text = await res.text();
    const frames = text.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6));
    expect(frames.at(-1)).not.toBe("[DONE]");
    const last = JSON.parse(frames.at(-1)!) as { error: { code: number }; choices: Array<{ finish_reason: string }> };
    expect(last.error.code).toBe(502);
    expect(last.choices[0]?.finish_reason).toBe("error");
    const stored = await generation(id);
    expect(stored).toMatchObject({ finish_reason: "error", streamed: true });
    expect(stored.total_cost as number).toBeGreaterThan(0);
  });
});
