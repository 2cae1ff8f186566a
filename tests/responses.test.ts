import { OpenRouter } from "@openrouter/sdk";
import { BadGatewayResponseError, BadRequestResponseError } from "@openrouter/sdk/models/errors";
import OpenAI from "openai";
import type { Response, ResponseUsage } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeAgent, toolResults, type FakeAgent, type Message, type Script } from "./support/fake-agent.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { collect, completedOf, deltas, increasing, parseEvents, shape, substance, textEvents } from "./support/responses-events.js";

let gw: TestGateway;
let compat: FakeProvider;
let agent: FakeAgent;
let key: string;
let openai: OpenAI;

const scripts: Record<string, Script> = {
  // Calls the client's get_weather once; with its result in the conversation, answers from it.
  weather: (body) => {
    const result = body.messages.find((m) => m.role === "tool");
    return result ? { content: `Paris: ${String(result.content)}` } : { calls: [{ name: "get_weather", arguments: { city: "Paris" } }] };
  },
  // Asks the gateway's clock once, then says what it read.
  clock: (body) => {
    const results = toolResults(body.messages);
    return results.length ? { content: `It is ${String(results[0]!.datetime)}` } : { content: "Checking. ", calls: [{ name: "datetime", arguments: { timezone: "Asia/Tokyo" } }] };
  },
};

// Cached prompt tokens are priced at the cache-read price.
const pricing = { prompt: "0.000001", completion: "0.000002", input_cache_read: "0.0000005" };
const model = (id: string, upstream: string, providers = ["compat"]) => ({
  id,
  name: id,
  context_length: 8000,
  endpoints: providers.map((provider) => ({ provider, upstream_model: upstream, pricing })),
});

beforeAll(async () => {
  compat = await startFakeProvider("compat");
  agent = await startFakeAgent(scripts);
  const catalog = {
    providers: [
      { slug: "compat", name: "Compat", adapter: "openai-compatible", base_url: compat.baseUrl, api_key_env: "COMPAT_KEY" },
      { slug: "compat-b", name: "Compat B", adapter: "openai-compatible", base_url: compat.baseUrl, requires_api_key: false },
      { slug: "agent", name: "Agent", adapter: "openai-compatible", base_url: agent.baseUrl, requires_api_key: false },
    ],
    models: [
      model("compat/ok", "ok"),
      // Every endpoint refuses the request, or fails.
      model("compat/bad", "bad-request", ["compat", "compat-b"]),
      model("compat/down", "fail-500", ["compat", "compat-b"]),
      model("agent/weather", "weather", ["agent"]),
      model("agent/clock", "clock", ["agent"]),
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), COMPAT_KEY: "compat-secret" });
  key = String((await gw.call("POST", "/keys", { body: { name: "responses" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await compat?.stop();
  await agent?.stop();
});

/** Usage as the gateway states it, with OpenRouter's cost fields. */
type PricedUsage = ResponseUsage & { cost: number; is_byok: boolean; server_tool_use_details: { tool_calls_requested: number; tool_calls_executed: number } };
const usageOf = (response: Response) => response.usage as PricedUsage;
// fake-provider: 12 prompt tokens (2 of them cached) and 5 completion tokens.
const compatCost = 10 * 0.000001 + 2 * 0.0000005 + 5 * 0.000002;
const lastCompat = () => compat.requests.at(-1)!.body;
const generation = async (id: string) => {
  await eventually(async () => (await gw.call("GET", `/generation?id=${id}`, { key })).status === 200, 5000);
  return (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as Record<string, unknown>;
};

describe("POST /responses through the openai client", () => {
  it("answers buffered with the message, priced usage, the generation id and its record", async () => {
    const { data, response } = await openai.responses
      .create({ model: "compat/ok", instructions: "Be brief.", input: "Say hello", max_output_tokens: 50, temperature: 0.3 })
      .withResponse();
    expect(data.output_text).toBe("Hello from compat");
    expect(data).toMatchObject({ object: "response", status: "completed", model: "compat/ok", instructions: "Be brief.", max_output_tokens: 50, temperature: 0.3, store: false });
    expect(data.output).toEqual([
      { type: "message", id: expect.stringMatching(/^msg_/), role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello from compat", annotations: [], logprobs: [] }] },
    ]);
    const usage = usageOf(data);
    expect(usage).toMatchObject({ input_tokens: 12, input_tokens_details: { cached_tokens: 2 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 17, is_byok: false });
    expect(usage.cost).toBeCloseTo(compatCost, 12);
    // The instructions lead as a system message; max_output_tokens is the chat upstream's max_tokens.
    expect(lastCompat()).toMatchObject({
      model: "ok",
      max_tokens: 50,
      temperature: 0.3,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Say hello" },
      ],
    });
    expect(compat.requests.at(-1)!.authorization).toBe("Bearer compat-secret");
    expect(response.headers.get("x-generation-id")).toBe(data.id);
    const stored = await generation(data.id);
    expect(stored).toMatchObject({ id: data.id, model: "compat/ok", provider_name: "compat", tokens_prompt: 12, tokens_completion: 5, streamed: false, finish_reason: "stop" });
    expect(stored.total_cost).toBeCloseTo(compatCost, 12);
  });

  it("streams the named events in order, numbered, ending in the answer a buffered request gets", async () => {
    const params = { model: "compat/ok", instructions: "Be brief.", input: "Say hello", max_output_tokens: 50 };
    const buffered = await openai.responses.create(params);
    const stream = openai.responses.stream(params);
    const events = await collect(stream);
    const final = await stream.finalResponse();
    expect(shape(events)).toEqual(textEvents);
    expect(increasing(events)).toBe(true);
    expect(deltas(events, "response.output_text.delta")).toBe("Hello from compat");
    expect(lastCompat()).toMatchObject({ stream: true, max_tokens: 50 });
    expect(substance(final)).toEqual(substance(buffered));
    expect(usageOf(final).cost).toBeCloseTo(compatCost, 12);
    const stored = await generation(final.id);
    expect(stored).toMatchObject({ streamed: true, tokens_prompt: 12, tokens_completion: 5 });

    // create({stream: true}) sends the same events; the first and last carry the whole response.
    const raw = await collect(await openai.responses.create({ ...params, stream: true }));
    expect(shape(raw)).toEqual(textEvents);
    expect(raw[0]).toMatchObject({ type: "response.created", sequence_number: 0, response: { status: "in_progress", output: [] } });
    expect(substance(completedOf(raw))).toEqual(substance(buffered));
  });

  it("maps text.format, reasoning and image input parts to the chat upstream's fields", async () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };
    await openai.responses.create({
      model: "compat/ok",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "Describe both" },
            { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" },
            { type: "input_image", image_url: "https://example.com/cat.jpg", detail: "auto" },
          ],
        },
      ],
      text: { format: { type: "json_schema", name: "answer", schema, strict: true } },
      reasoning: { effort: "high", summary: "detailed" },
    });
    expect(lastCompat()).toMatchObject({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Describe both" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } },
            { type: "image_url", image_url: { url: "https://example.com/cat.jpg", detail: "auto" } },
          ],
        },
      ],
      response_format: { type: "json_schema", json_schema: { name: "answer", schema, strict: true } },
      reasoning: { effort: "high", summary: "detailed" },
      reasoning_effort: "high",
    });
  });
});

describe("function tools", () => {
  const tools = [{ type: "function" as const, name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];

  it("returns the model's call, buffered and streamed, and sends its result back as a tool message", async () => {
    const first = await openai.responses.create({ model: "agent/weather", input: "Weather in Paris?", tools, tool_choice: { type: "function", name: "get_weather" } });
    expect(agent.requests.at(-1)).toMatchObject({
      tools: [{ type: "function", function: { name: "get_weather", description: "Weather by city", parameters: tools[0]!.parameters, strict: false } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
    });
    expect(first.tool_choice).toEqual({ type: "function", name: "get_weather" });
    expect(first.output).toEqual([{ type: "function_call", id: expect.stringMatching(/^fc_/), call_id: expect.stringMatching(/^call_/), name: "get_weather", arguments: '{"city":"Paris"}', status: "completed" }]);
    expect(first.output_text).toBe("");

    const events = await collect(openai.responses.stream({ model: "agent/weather", input: "Weather in Paris?", tools }));
    expect(shape(events)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(increasing(events)).toBe(true);
    expect(events.filter((e) => e.type === "response.function_call_arguments.delta").length).toBeGreaterThan(1);
    expect(deltas(events, "response.function_call_arguments.delta")).toBe('{"city":"Paris"}');
    expect(events.find((e) => e.type === "response.function_call_arguments.done")).toMatchObject({ name: "get_weather", arguments: '{"city":"Paris"}' });

    // The next request carries the call as the answer gave it and the function's output.
    const call = first.output[0]!;
    if (call.type !== "function_call") throw new Error("expected a function call");
    const second = await openai.responses.create({
      model: "agent/weather",
      tools,
      input: [{ role: "user", content: "Weather in Paris?" }, call, { type: "function_call_output", call_id: call.call_id, output: "sunny, 21°C" }],
    });
    expect(agent.requests.at(-1)!.messages).toEqual([
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: null, tool_calls: [{ id: call.call_id, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", tool_call_id: call.call_id, content: "sunny, 21°C" },
    ]);
    expect(second.output_text).toBe("Paris: sunny, 21°C");
  });
});

describe("server tools", () => {
  it("runs openrouter:datetime and shows its item before the final message, counted in usage", async () => {
    const client = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
    const before = agent.requests.length;
    const result = await client.responses.send({ responsesRequest: { model: "agent/clock", input: "What time is it in Tokyo?", tools: [{ type: "openrouter:datetime" }] } });
    if (Symbol.asyncIterator in result) throw new Error("expected a buffered response");
    expect(agent.requests.length - before).toBe(2);
    const [turn1, turn2] = agent.requests.slice(before);
    expect(turn1!.tools).toEqual([expect.objectContaining({ type: "function", function: expect.objectContaining({ name: "datetime" }) })]);
    const read = toolResults(turn2!.messages as Message[])[0]!;
    expect(read.timezone).toBe("Asia/Tokyo");
    expect(result.output.map((item) => item.type)).toEqual(["openrouter:datetime", "message"]);
    expect(result.output[0]).toMatchObject({ type: "openrouter:datetime", status: "completed", timezone: "Asia/Tokyo", datetime: read.datetime });
    expect(result.outputText).toBe(`Checking. It is ${String(read.datetime)}`);
    expect(result.usage?.serverToolUseDetails).toMatchObject({ toolCallsRequested: 1, toolCallsExecuted: 1 });
    // Two turns of 10 prompt and 5 completion tokens.
    expect(result.usage).toMatchObject({ inputTokens: 20, outputTokens: 10 });

    const res = await fetch(`${gw.apiUrl}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "agent/clock", input: "What time is it in Tokyo?", tools: [{ type: "openrouter:datetime" }], stream: true }),
    });
    const events = parseEvents(await res.text());
    expect(increasing(events)).toBe(true);
    const added = events.filter((e) => e.type === "response.output_item.added").map((e) => (e.type === "response.output_item.added" ? String(e.item.type) : ""));
    expect(added).toEqual(["message", "openrouter:datetime", "message"]);
    const completed = completedOf(events);
    expect(completed.output.map((item) => String(item.type))).toEqual(["message", "openrouter:datetime", "message"]);
    expect(usageOf(completed).server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1 });
  });
});

describe("POST /responses through @openrouter/sdk", () => {
  it("passes its response validation buffered and streamed", async () => {
    const client = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
    const result = await client.responses.send({ responsesRequest: { model: "compat/ok", input: "Say hello", instructions: "Be brief.", maxOutputTokens: 40 } });
    if (Symbol.asyncIterator in result) throw new Error("expected a buffered response");
    expect(result.outputText).toBe("Hello from compat");
    expect(result.status).toBe("completed");
    expect(result.usage).toMatchObject({ inputTokens: 12, outputTokens: 5, inputTokensDetails: { cachedTokens: 2 }, outputTokensDetails: { reasoningTokens: 0 } });
    expect(result.usage?.cost).toBeCloseTo(compatCost, 12);

    const stream = await client.responses.send({ responsesRequest: { model: "compat/ok", input: "Say hello", stream: true } });
    if (!(Symbol.asyncIterator in stream)) throw new Error("expected a stream");
    const types: string[] = [];
    let text = "";
    let final: unknown;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta" && "delta" in event) text += event.delta;
      if (event.type === "response.completed" && "response" in event) final = event.response;
    }
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(text).toBe("Hello from compat");
    expect(final).toMatchObject({ status: "completed", outputText: "Hello from compat", usage: { inputTokens: 12, outputTokens: 5 } });
  });

  it("raises its typed error with the gateway's message when every endpoint fails", async () => {
    const client = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
    const raw = await gw.call("POST", "/responses", { key, body: { model: "compat/bad", input: "Hi" } });
    expect(raw.status).toBe(400);
    expect(raw.body).toMatchObject({ error: { code: 400, message: "Provider rejected the request" } });
    const refused = client.responses.send({ responsesRequest: { model: "compat/bad", input: "Hi" } });
    await expect(refused).rejects.toBeInstanceOf(BadRequestResponseError);
    await expect(refused).rejects.toMatchObject({ error: { code: 400, message: "Provider rejected the request" } });

    const down = await gw.call("POST", "/responses", { key, body: { model: "compat/down", input: "Hi" } });
    expect(down.status).toBe(502);
    const failed = client.responses.send({ responsesRequest: { model: "compat/down", input: "Hi" } }, { retries: { strategy: "none" } });
    await expect(failed).rejects.toBeInstanceOf(BadGatewayResponseError);
    await expect(failed).rejects.toMatchObject({ error: { code: 502, message: down.body.error?.message } });
  });
});

describe("what a stateless gateway refuses", () => {
  it("refuses stored-response features, unknown fields and management keys", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ previous_response_id: "resp_123" }, /previous_response_id is not supported/],
      [{ store: true }, /store: true is not supported/],
      [{ conversation: "conv_1" }, /conversation is not supported/],
      [{ background: true }, /background: true is not supported/],
      [{ frobnicate: 1 }, /frobnicate/],
      [{ input: [{ type: "item_reference", id: "msg_1" }] }, /item_reference is not supported/],
    ];
    for (const [extra, message] of cases) {
      const res = await gw.call("POST", "/responses", { key, body: { model: "compat/ok", input: "Hi", ...extra } });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.error?.message).toMatch(message);
    }
    // store: false is what Switchyard does anyway.
    expect((await gw.call("POST", "/responses", { key, body: { model: "compat/ok", input: "Hi", store: false } })).status).toBe(200);
    const management = await gw.call("POST", "/responses", { body: { model: "compat/ok", input: "Hi" } });
    expect(management.status).toBe(403);
    await expect(new OpenAI({ apiKey: "sk-not-a-key", baseURL: gw.apiUrl }).responses.create({ model: "compat/ok", input: "Hi" })).rejects.toMatchObject({ status: 401 });
  });
});
