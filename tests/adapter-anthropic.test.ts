import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startFakeUpstream, type FakeUpstream, type Received } from "./support/recording-upstream.js";

/**
 * The Anthropic adapter's settings seen where they act: what Anthropic received, what the client was told
 * and what it was charged. The upstream model name says which tier the fake says it served.
 */
let gw: TestGateway;
let up: FakeUpstream;
let key: string;

/** Anthropic's usage figures: 100 tokens in, 180 out, at the tier the model name gives. */
const usageOf = (model: unknown) => ({ input_tokens: 100, output_tokens: 180, service_tier: model === "served-priority" ? "priority" : "standard" });

function reply(r: Received) {
  const usage = usageOf(r.body.model);
  if (!r.body.stream) {
    return { json: { id: "msg_1", type: "message", role: "assistant", model: r.body.model, content: [{ type: "text", text: "hi" }], stop_reason: "end_turn", stop_sequence: null, usage } };
  }
  const events = [
    { type: "message_start", message: { id: "msg_2", type: "message", role: "assistant", content: [], model: r.body.model, usage: { ...usage, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hi" } },
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 180 } },
    { type: "message_stop" },
  ];
  return { headers: { "content-type": "text/event-stream" }, raw: events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("") };
}

const pricing = { prompt: "0.000003", completion: "0.000015" };
const service_tiers = { priority: { prompt: "0.00003", completion: "0.00015" } };
/** 100 × prompt + 180 × completion: $0.003 at the standard prices, $0.03 at priority's. */
const standardCost = 0.003;
const priorityCost = 0.03;

beforeAll(async () => {
  up = await startFakeUpstream();
  up.answer(reply);
  const endpoint = (upstream: string) => ({ provider: "claude", upstream_model: upstream, pricing, service_tiers, max_completion_tokens: 4096 });
  const catalog = {
    providers: [{ slug: "claude", name: "Claude", adapter: "anthropic", base_url: `${up.origin}/v1`, requires_api_key: false }],
    models: [
      { id: "anthropic/standard", name: "standard", context_length: 200000, endpoints: [endpoint("served-standard")] },
      { id: "anthropic/priority", name: "priority", context_length: 200000, endpoints: [endpoint("served-priority")] },
      { id: "anthropic/listed", name: "listed", context_length: 200000, endpoints: [{ ...endpoint("served-standard"), supported_parameters: ["max_tokens", "temperature", "seed"] }] },
    ],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  key = String((await gw.call("POST", "/keys", { body: { name: "anthropic-settings" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await up?.stop();
});

const user = [{ role: "user", content: "Hi" }];
const metadata = { "X-OpenRouter-Metadata": "enabled" };
const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) => gw.call("POST", "/chat/completions", { key, body, headers });
const summaryOf = (body: Record<string, unknown>) => String((body.openrouter_metadata as { summary?: string } | undefined)?.summary);

/** The recorded charge of a generation, once its record is written. */
async function recordedCost(id: string): Promise<number> {
  await eventually(async () => (await gw.call("GET", `/generation?id=${id}`, { key })).status === 200, 5000);
  return Number((await gw.call("GET", `/generation?id=${id}`, { key })).body.data?.total_cost);
}

/** A streamed answer's data frames, parsed, without `[DONE]`. */
async function streamed(body: Record<string, unknown>) {
  const res = await fetch(`${gw.apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const frames = (await res.text()).split("\n\n").filter((f) => f.startsWith("data: ") && f !== "data: [DONE]");
  return { id: res.headers.get("x-generation-id")!, chunks: frames.map((f) => JSON.parse(f.slice(6)) as Record<string, unknown>) };
}

describe("the tier Anthropic served", () => {
  it("is charged and reported for a buffered answer, standard as default", async () => {
    const asked = await chat({ model: "anthropic/standard", messages: user, service_tier: "priority" });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    expect(up.last().body.service_tier).toBe("auto");
    expect(asked.body.service_tier).toBe("default");
    expect((asked.body.usage as { cost: number }).cost).toBeCloseTo(standardCost, 12);
    expect(await recordedCost(String(asked.body.id))).toBeCloseTo(standardCost, 12);

    const auto = await chat({ model: "anthropic/priority", messages: user, service_tier: "auto" });
    expect(auto.body.service_tier).toBe("priority");
    expect((auto.body.usage as { cost: number }).cost).toBeCloseTo(priorityCost, 12);
  });

  it("is held for with auto or no tier, so a small max_tokens does not cap a priority charge at standard prices", async () => {
    // 200 completion tokens at standard prices hold $0.003 and a little: less than the $0.03 priority charge.
    for (const tier of [{ service_tier: "auto" }, {}]) {
      const auto = await chat({ model: "anthropic/priority", messages: user, max_tokens: 200, ...tier });
      expect(auto.body.service_tier).toBe("priority");
      expect((auto.body.usage as { cost: number }).cost).toBeCloseTo(priorityCost, 12);
      expect(await recordedCost(String(auto.body.id))).toBeCloseTo(priorityCost, 12);
    }
  });

  it("is charged and reported for a streamed answer, from message_start", async () => {
    const asked = await streamed({ model: "anthropic/standard", messages: user, service_tier: "priority" });
    const last = asked.chunks.at(-1) as { usage: { cost: number } };
    expect(last.usage.cost).toBeCloseTo(standardCost, 12);
    expect(asked.chunks.some((c) => c.service_tier === "default")).toBe(true);
    expect(await recordedCost(asked.id)).toBeCloseTo(standardCost, 12);

    const auto = await streamed({ model: "anthropic/priority", messages: user, service_tier: "auto" });
    expect((auto.chunks.at(-1) as { usage: { cost: number } }).usage.cost).toBeCloseTo(priorityCost, 12);
    expect(auto.chunks.some((c) => c.service_tier === "priority")).toBe(true);
  });
});

describe("debug.echo_upstream_body", () => {
  it("echoes the Messages request Anthropic received, not the chat body it was made from", async () => {
    const { chunks } = await streamed({ model: "anthropic/standard", messages: user, max_tokens: 50, user: "someone", debug: { echo_upstream_body: true } });
    const echoed = (chunks[0]!.debug as { echo_upstream_body: Record<string, unknown> }).echo_upstream_body;
    expect(echoed).toEqual(up.last().body);
    expect(echoed).toMatchObject({ model: "served-standard", max_tokens: 50, stream: true, metadata: { user_id: expect.stringMatching(/./) } });
  });
});

describe("tool_choice", () => {
  const weather = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } };

  it("goes as none alone with parallel_tool_calls false, which ToolChoiceNone has no place for", async () => {
    expect((await chat({ model: "anthropic/standard", messages: user, tools: [weather], tool_choice: "none", parallel_tool_calls: false })).status).toBe(200);
    expect(up.last().body.tool_choice).toEqual({ type: "none" });
    await chat({ model: "anthropic/standard", messages: user, tools: [weather], tool_choice: "required", parallel_tool_calls: false });
    expect(up.last().body.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
  });
});

describe("parameters the Messages API cannot carry", () => {
  const uncarried = {
    prediction: { type: "content", content: "hi" },
    modalities: ["text", "image"],
    response_format: { type: "json_object" },
    seed: 7,
    logprobs: true,
    top_logprobs: 2,
    frequency_penalty: 0.5,
    presence_penalty: 0.5,
    logit_bias: { "50256": -100 },
    min_p: 0.1,
    top_a: 0.1,
    repetition_penalty: 1.1,
  };

  it("are dropped and named in the summary on an endpoint whose catalog entry lists none", async () => {
    const r = await chat({ model: "anthropic/standard", messages: user, ...uncarried }, metadata);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    for (const name of Object.keys(uncarried)) {
      expect(up.last().body, name).not.toHaveProperty(name);
      expect(summaryOf(r.body), name).toMatch(new RegExp(`dropped: .*\\b${name}\\b`));
    }
  });

  it("are not named when they ask for nothing beyond text", async () => {
    const r = await chat({ model: "anthropic/standard", messages: user, modalities: ["text"], response_format: { type: "text" } }, metadata);
    expect(summaryOf(r.body)).not.toContain("dropped");
  });

  it("are refused with 400 under provider.require_parameters, before Anthropic is called, though the catalog lists them", async () => {
    const before = up.requests.length;
    const r = await chat({ model: "anthropic/listed", messages: user, seed: 7, provider: { require_parameters: true } });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body.error)).toMatch(/seed.*require_parameters/);
    expect(up.requests.length).toBe(before);
  });
});

describe("sampling Anthropic cannot take", () => {
  it("drops a temperature above 1 and names it, where 1 is Anthropic's highest", async () => {
    const r = await chat({ model: "anthropic/standard", messages: user, temperature: 1.5 }, metadata);
    expect(r.status).toBe(200);
    expect(up.last().body).not.toHaveProperty("temperature");
    expect(summaryOf(r.body)).toMatch(/dropped: .*temperature/);
    const kept = await chat({ model: "anthropic/standard", messages: user, temperature: 0.7 }, metadata);
    expect(up.last().body.temperature).toBe(0.7);
    expect(summaryOf(kept.body)).not.toContain("dropped");
  });

  it("drops temperature, top_p and top_k beside thinking and names them", async () => {
    const r = await chat({ model: "anthropic/standard", messages: user, max_tokens: 4000, reasoning: { effort: "low" }, temperature: 0.5, top_p: 0.9, top_k: 5 }, metadata);
    expect(r.status).toBe(200);
    expect(up.last().body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    for (const name of ["temperature", "top_p", "top_k"]) expect(up.last().body, name).not.toHaveProperty(name);
    expect(summaryOf(r.body)).toMatch(/dropped: temperature, top_p, top_k/);
  });
});
