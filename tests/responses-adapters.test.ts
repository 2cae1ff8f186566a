import { createServer } from "node:http";
import { join } from "node:path";
import OpenAI from "openai";
import type { Response, ResponseInputItem, ResponseUsage } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startFakeResponses, type FakeResponses } from "./support/fake-responses.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";
import { startReplayProvider, type Answer, type ReplayProvider } from "./support/replay-provider.js";
import { collect, completedOf, deltas, increasing, shape, substance, textEvents } from "./support/responses-events.js";

let gw: TestGateway;
let compat: FakeProvider;
let responses: FakeResponses;
let claude: ReplayProvider;
let gemini: ReplayProvider;
let both: { baseUrl: string; stop(): Promise<void> };
let key: string;
let openai: OpenAI;

/** Recordings by upstream model name, buffered and streamed. */
const anthropicAnswers: Record<string, Answer> = { text: { file: "message.json" }, tools: { file: "tool-use.json" } };
const anthropicStreams: Record<string, Answer> = { text: { file: "stream.sse" }, tools: { file: "tool-stream.sse" } };
const googleAnswers: Record<string, Answer> = { text: { file: "generate.json" }, tools: { file: "tools.json" } };
const googleStreams: Record<string, Answer> = { text: { file: "stream.sse" }, tools: { file: "tools-stream.sse" } };

const pricing = { prompt: "0.000002", completion: "0.000008", input_cache_read: "0.0000005" };
const model = (id: string, provider: string, upstream: string) => ({
  id,
  name: id,
  context_length: 200000,
  input_modalities: ["text", "image"],
  endpoints: [{ provider, upstream_model: upstream, pricing, max_completion_tokens: 8192 }],
});

beforeAll(async () => {
  compat = await startFakeProvider("compat");
  responses = await startFakeResponses();
  claude = await startReplayProvider(join(import.meta.dirname, "fixtures/anthropic"), (req) => {
    const plan = (req.body.stream ? anthropicStreams : anthropicAnswers)[String(req.body.model)];
    if (!plan) throw new Error(`no recording for ${String(req.body.model)}`);
    return plan;
  });
  gemini = await startReplayProvider(join(import.meta.dirname, "fixtures/google"), (req) => {
    const [, name, method] = /\/models\/([^:]+):(\w+)/.exec(req.path) ?? [];
    const plan = (method === "streamGenerateContent" ? googleStreams : googleAnswers)[name ?? ""];
    if (!plan) throw new Error(`no recording for ${req.path}`);
    return plan;
  });
  // An OpenAI endpoint with both APIs: /responses answered by the Responses fake, the rest by the chat one.
  both = await listenLocal(
    createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const target = (req.url === "/v1/responses" ? responses.baseUrl : compat.baseUrl).replace(/\/v1$/, "");
      const answer = await fetch(`${target}${req.url ?? ""}`, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) });
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" }).end(Buffer.from(await answer.arrayBuffer()));
    }),
  );
  const catalog = {
    providers: [
      { slug: "openai-both", name: "OpenAI (both APIs)", adapter: "openai", base_url: both.baseUrl, requires_api_key: false },
      { slug: "compat", name: "Compat", adapter: "openai-compatible", base_url: compat.baseUrl, requires_api_key: false },
      { slug: "openai", name: "OpenAI", adapter: "openai", base_url: responses.baseUrl, api_key_env: "OPENAI_KEY" },
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
      { slug: "gemini", name: "Gemini", adapter: "google", base_url: gemini.baseUrl, api_key_env: "GEMINI_KEY" },
    ],
    models: [
      model("compat/ok", "compat", "ok"),
      model("openai/gpt", "openai", "gpt"),
      model("openai/reasoning", "openai", "gpt-reasoning"),
      model("openai/both", "openai-both", "ok"),
      model("anthropic/text", "claude", "text"),
      model("anthropic/tools", "claude", "tools"),
      model("google/text", "gemini", "text"),
      model("google/tools", "gemini", "tools"),
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), OPENAI_KEY: "openai-secret", CLAUDE_KEY: "claude-secret", GEMINI_KEY: "gemini-secret" });
  key = String((await gw.call("POST", "/keys", { body: { name: "adapters" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await Promise.all([compat?.stop(), responses?.stop(), claude?.stop(), gemini?.stop(), both?.stop()]);
});

type PricedUsage = ResponseUsage & { cost: number };
const lastOpenAi = () => responses.requests.at(-1)!.body;
const weather = { type: "function" as const, name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false };
const types = (r: Response) => r.output.map((item) => item.type);

describe("each adapter serves the Responses dialect, buffered and streamed", () => {
  // The instructions as each upstream received them: a system message, or its own system field.
  const instructions: Record<string, () => unknown> = {
    "OpenAI-compatible": () => (compat.requests.at(-1)!.body.messages as unknown[])[0],
    "OpenAI Responses": () => (lastOpenAi().input as unknown[])[0],
    Anthropic: () => claude.requests.at(-1)!.body.system,
    Gemini: () => gemini.requests.at(-1)!.body.systemInstruction,
  };
  const system: Record<string, unknown> = {
    "OpenAI-compatible": { role: "system", content: "Be brief." },
    "OpenAI Responses": { type: "message", role: "system", content: [{ type: "input_text", text: "Be brief." }] },
    Anthropic: [{ type: "text", text: "Be brief." }],
    Gemini: { parts: [{ text: "Be brief." }] },
  };
  const cases: Array<[string, string, string, RegExp]> = [
    ["OpenAI-compatible", "compat/ok", "Hello from compat", /^$/],
    ["OpenAI Responses", "openai/gpt", "Hello from the fake Responses server.", /^$/],
    ["Anthropic", "anthropic/text", "Hello from Claude", /^$/],
    ["Gemini", "google/text", "Hello from Gemini!", /Choosing a greeting/],
  ];
  for (const [name, id, streamedText, thought] of cases) {
    it(`${name}: streams the same kind of answer it gives buffered`, async () => {
      const buffered = await openai.responses.create({ model: id, input: "Say hello", instructions: "Be brief." });
      expect(instructions[name]!()).toEqual(system[name]);
      expect(buffered.status).toBe("completed");
      expect(buffered.output_text.length).toBeGreaterThan(0);
      expect(buffered.usage?.input_tokens).toBeGreaterThan(0);
      const stream = openai.responses.stream({ model: id, input: "Say hello", instructions: "Be brief." });
      const events = await collect(stream);
      const final = await stream.finalResponse();
      expect(increasing(events)).toBe(true);
      expect(final.output_text).toBe(streamedText);
      expect(deltas(events, "response.output_text.delta")).toBe(streamedText);
      expect(deltas(events, "response.reasoning_text.delta")).toMatch(thought);
      // A reasoning item, when the model thought, then the message: the same items as buffered.
      expect(types(final)).toEqual(types(buffered));
      const reasoned = ["response.output_item.added", "response.content_part.added", "response.reasoning_text.delta", "response.reasoning_text.done", "response.content_part.done", "response.output_item.done"];
      expect(shape(events)).toEqual(thought.source === "^$" ? textEvents : [...textEvents.slice(0, 2), ...reasoned, ...textEvents.slice(2)]);
      expect(completedOf(events).usage).toEqual(final.usage);
    });
  }
});

describe("OpenAI's own endpoints get the Responses API", () => {
  it("sends input items, store: false and the reasoning asked for, and shows the summary and encrypted reasoning", async () => {
    const { data, response } = await openai.responses
      .create({ model: "openai/reasoning", instructions: "Be brief.", input: "Say hello", max_output_tokens: 300, reasoning: { effort: "high", summary: "detailed" } })
      .withResponse();
    expect(responses.requests.at(-1)!.authorization).toBe("Bearer openai-secret");
    expect(lastOpenAi()).toEqual({
      model: "gpt-reasoning",
      input: [
        { type: "message", role: "system", content: [{ type: "input_text", text: "Be brief." }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "Say hello" }] },
      ],
      store: false,
      stream: false,
      max_output_tokens: 300,
      reasoning: { effort: "high", summary: "detailed" },
      include: ["reasoning.encrypted_content"],
    });
    expect(data.output_text).toBe("Hello from the fake Responses server.");
    // OpenAI's reasoning item, whole: its id, its summary parts and its encrypted content.
    const n = responses.requests.length;
    const summary = [
      { type: "summary_text", text: "The caller wants a greeting." },
      { type: "summary_text", text: "A short answer will do." },
    ];
    expect(data.output[0]).toEqual({ type: "reasoning", id: `rs_fake_${n}`, status: "completed", summary, encrypted_content: `gAAAAB-fake-encrypted-${n}`, format: "openai-responses-v1" });
    expect(types(data)).toEqual(["reasoning", "message"]);
    // 20 input tokens (4 cached) and 9 output tokens (3 reasoning).
    const usage = data.usage as PricedUsage;
    expect(usage).toMatchObject({ input_tokens: 20, input_tokens_details: { cached_tokens: 4 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 3 } });
    expect(usage.cost).toBeCloseTo(16 * 0.000002 + 4 * 0.0000005 + 9 * 0.000008, 12);
    expect(response.headers.get("x-generation-id")).toBe(data.id);

    const stream = openai.responses.stream({ model: "openai/reasoning", instructions: "Be brief.", input: "Say hello", max_output_tokens: 300, reasoning: { effort: "high", summary: "detailed" } });
    const events = await collect(stream);
    expect(lastOpenAi()).toMatchObject({ stream: true, store: false });
    expect(increasing(events)).toBe(true);
    expect(shape(events).slice(0, 6)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
    ]);
    expect(deltas(events, "response.reasoning_summary_text.delta")).toBe("The caller wants a greeting.A short answer will do.");
    const final = await stream.finalResponse();
    const { output: streamedOutput, ...streamed } = substance(final);
    const { output: bufferedOutput, ...whole } = substance(data);
    expect(streamed).toEqual(whole);
    // The encrypted content differs per request; the items are otherwise the same.
    const scrub = (output: unknown) => JSON.stringify(output).replace(/fake-encrypted-\d+/g, "fake-encrypted");
    expect(scrub(streamedOutput)).toBe(scrub(bufferedOutput));

    // Reasoning sent back goes upstream as the reasoning item it was.
    await openai.responses.create({ model: "openai/reasoning", input: [{ role: "user", content: "Say hello" }, ...(data.output as ResponseInputItem[]), { role: "user", content: "Again" }] });
    expect((lastOpenAi().input as unknown[]).slice(1, 3)).toEqual([
      { type: "reasoning", id: `rs_fake_${n}`, summary, encrypted_content: `gAAAAB-fake-encrypted-${n}` },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello from the fake Responses server." }] },
    ]);
  });

  it("round-trips a function call as function_call and function_call_output items, with json_schema and images carried", async () => {
    const schema = { type: "object", properties: { sky: { type: "string" } }, required: ["sky"], additionalProperties: false };
    const first = await openai.responses.create({
      model: "openai/gpt",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "Weather here?" },
            { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" },
            { type: "input_image", image_url: "https://example.com/sky.jpg", detail: "auto" },
          ],
        },
      ],
      tools: [weather],
      text: { format: { type: "json_schema", name: "sky", schema, strict: true } },
    });
    expect(lastOpenAi()).toMatchObject({
      input: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "Weather here?" },
            { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" },
            { type: "input_image", image_url: "https://example.com/sky.jpg", detail: "auto" },
          ],
        },
      ],
      tools: [{ type: "function", name: "get_weather", description: "Weather by city", parameters: weather.parameters, strict: false }],
      text: { format: { type: "json_schema", name: "sky", schema, strict: true } },
    });
    const call = first.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ type: "function_call", call_id: `call_fake_${responses.requests.length}`, name: "get_weather", arguments: '{"city":"Paris"}', status: "completed" });
    if (call?.type !== "function_call") throw new Error("expected a function call");

    const events = await collect(openai.responses.stream({ model: "openai/gpt", input: "Weather here?", tools: [weather] }));
    expect(shape(events)).toContain("response.function_call_arguments.done");
    expect(deltas(events, "response.function_call_arguments.delta")).toBe('{"city":"Paris"}');

    const second = await openai.responses.create({
      model: "openai/gpt",
      tools: [weather],
      input: [{ role: "user", content: "Weather here?" }, call, { type: "function_call_output", call_id: call.call_id, output: "sunny" }],
    });
    expect(lastOpenAi().input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "Weather here?" }] },
      { type: "function_call", call_id: call.call_id, name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call_output", call_id: call.call_id, output: "sunny" },
    ]);
    expect(second.output_text).toBe("The tool answered: sunny");
  });

  it("keeps to Chat Completions when the request has a field the Responses API cannot carry", async () => {
    const [viaResponses, viaChat] = [responses.requests.length, compat.requests.length];
    const plain = await openai.responses.create({ model: "openai/both", input: "Say hello" });
    expect(plain.output_text).toBe("Hello from the fake Responses server.");
    expect([responses.requests.length - viaResponses, compat.requests.length - viaChat]).toEqual([1, 0]);
    // The openai client has no field for frequency_penalty; OpenRouter's Responses API has.
    const sampled = await gw.call("POST", "/responses", { key, body: { model: "openai/both", input: "Say hello", frequency_penalty: 0.5 } });
    expect(sampled.body.output_text).toBe("Hello from compat");
    expect([responses.requests.length - viaResponses, compat.requests.length - viaChat]).toEqual([1, 1]);
    expect(compat.requests.at(-1)).toMatchObject({ path: "/v1/chat/completions", body: { model: "ok", frequency_penalty: 0.5, messages: [{ role: "user", content: "Say hello" }] } });
  });

  it("runs a server tool between Responses API turns, sending the reasoning and the call back", async () => {
    const before = responses.requests.length;
    const body = { model: "openai/reasoning", input: "What time is it?", tools: [{ type: "openrouter:datetime" }] };
    const res = await gw.call("POST", "/responses", { key, body });
    const answer = res.body as unknown as Response & { usage: { server_tool_use_details: unknown } };
    const [turn1, turn2] = responses.requests.slice(before).map((r) => r.body);
    expect(turn1!.tools).toEqual([expect.objectContaining({ type: "function", name: "datetime" })]);
    const call = (turn2!.input as Array<Record<string, unknown>>).slice(1);
    expect(call).toEqual([
      { type: "reasoning", id: `rs_fake_${before + 1}`, summary: expect.any(Array), encrypted_content: `gAAAAB-fake-encrypted-${before + 1}` },
      { type: "function_call", call_id: `call_fake_${before + 1}`, name: "datetime", arguments: '{"city":"Paris"}' },
      { type: "function_call_output", call_id: `call_fake_${before + 1}`, output: expect.stringContaining("datetime") },
    ]);
    // Each turn's reasoning item keeps its own id, summary and encrypted content.
    expect(types(answer)).toEqual(["openrouter:datetime", "reasoning", "reasoning", "message"]);
    expect(answer.output.slice(1, 3)).toMatchObject([1, 2].map((turn) => ({ id: `rs_fake_${before + turn}`, encrypted_content: `gAAAAB-fake-encrypted-${before + turn}`, summary: [{}, {}] })));
    expect(answer.output_text).toMatch(/^The tool answered: /);
    expect(answer.usage.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1 });
  });
});

describe("Anthropic's Messages API", () => {
  it("shows thinking as a signed reasoning item before the call, and sends it back with the call and its result", async () => {
    const first = await openai.responses.create({ model: "anthropic/tools", input: "Weather in Paris?", tools: [weather], max_output_tokens: 4000, reasoning: { effort: "low", summary: "auto" } });
    expect(claude.requests.at(-1)).toMatchObject({ path: "/v1/messages", body: { max_tokens: 4000, tools: [{ name: "get_weather", input_schema: weather.parameters }] } });
    expect(types(first)).toEqual(["reasoning", "message", "function_call"]);
    const [thinking, said, call] = first.output;
    expect(thinking).toMatchObject({
      type: "reasoning",
      summary: [{ type: "summary_text", text: "The user wants the weather in Paris; I should call the tool." }],
      encrypted_content: "switchyard:signature:anthropic-claude-v1::EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
      format: "anthropic-claude-v1",
    });
    expect(said).toMatchObject({ type: "message", content: [{ type: "output_text", text: "Let me check the weather." }] });
    expect(call).toMatchObject({ type: "function_call", call_id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather" });
    if (call?.type !== "function_call") throw new Error("expected a function call");
    expect(JSON.parse(call.arguments)).toEqual({ city: "Paris", unit: "celsius" });

    const next = await openai.responses.create({
      model: "anthropic/text",
      tools: [weather],
      input: [{ role: "user", content: "Weather in Paris?" }, ...(first.output as ResponseInputItem[]), { type: "function_call_output", call_id: call.call_id, output: '{"temp": 21}' }],
    });
    expect(claude.requests.at(-1)!.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "The user wants the weather in Paris; I should call the tool.", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" },
          { type: "text", text: "Let me check the weather." },
          { type: "tool_use", id: call.call_id, name: "get_weather", input: { city: "Paris", unit: "celsius" } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.call_id, content: [{ type: "text", text: '{"temp": 21}' }] }] },
    ]);
    expect(next.output_text).toBe("Hello! How can I help you today?");
  });

  it("streams thinking, words and a call's arguments in pieces", async () => {
    const stream = openai.responses.stream({ model: "anthropic/tools", input: "Weather in Paris?", tools: [weather], reasoning: { effort: "low" } });
    const events = await collect(stream);
    const final = await stream.finalResponse();
    expect(increasing(events)).toBe(true);
    expect(deltas(events, "response.reasoning_text.delta")).toBe("I need the weather tool.");
    expect(deltas(events, "response.output_text.delta")).toBe("Checking.");
    expect(deltas(events, "response.function_call_arguments.delta")).toBe('{"city": "Paris"}');
    expect(types(final)).toEqual(["reasoning", "message", "function_call"]);
    expect(final.output[0]).toMatchObject({
      content: [{ type: "reasoning_text", text: "I need the weather tool." }],
      encrypted_content: "switchyard:signature:anthropic-claude-v1::EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
    });
    expect(final.output[2]).toMatchObject({ call_id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", arguments: '{"city": "Paris"}', status: "completed" });

    // Asked for a summary, the thinking streams as one.
    const summarized = await collect(openai.responses.stream({ model: "anthropic/tools", input: "Weather in Paris?", tools: [weather], reasoning: { effort: "low", summary: "auto" } }));
    expect(deltas(summarized, "response.reasoning_summary_text.delta")).toBe("I need the weather tool.");
    expect(completedOf(summarized).output[0]).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: "I need the weather tool." }] });
  });
});

describe("Gemini's generateContent", () => {
  it("answers parallel function calls, buffered and streamed", async () => {
    const buffered = await openai.responses.create({ model: "google/tools", input: "Weather in Paris and Tokyo?", tools: [weather], tool_choice: "required" });
    expect(gemini.requests.at(-1)).toMatchObject({ path: "/v1/models/tools:generateContent", body: { toolConfig: { functionCallingConfig: { mode: "ANY" } } } });
    const calls = buffered.output.flatMap((item) => (item.type === "function_call" ? [[item.name, JSON.parse(item.arguments) as unknown]] : []));
    expect(calls).toEqual([
      ["get_weather", { city: "Paris" }],
      ["get_weather", { city: "Tokyo", units: "celsius" }],
    ]);

    const stream = openai.responses.stream({ model: "google/tools", input: "Weather in Paris and Tokyo?", tools: [weather] });
    const events = await collect(stream);
    const final = await stream.finalResponse();
    expect(gemini.requests.at(-1)!.path).toBe("/v1/models/tools:streamGenerateContent?alt=sse");
    expect(increasing(events)).toBe(true);
    expect(final.output_text).toBe("Checking both cities.");
    const streamed = final.output.flatMap((item) => (item.type === "function_call" ? [[item.name, JSON.parse(item.arguments) as unknown]] : []));
    expect(streamed).toEqual([
      ["get_weather", { city: "Paris" }],
      ["get_weather", { city: "Tokyo" }],
    ]);

    // Sent back, the calls carry their thought signature to Gemini, and the results follow as function responses.
    const outputs = final.output.flatMap((item): ResponseInputItem[] => (item.type === "function_call" ? [{ type: "function_call_output", call_id: item.call_id, output: "sunny" }] : []));
    const next = await openai.responses.create({ model: "google/text", tools: [weather], input: [{ role: "user", content: "Weather in Paris and Tokyo?" }, ...(final.output as ResponseInputItem[]), ...outputs] });
    expect(next.output_text).toBe("Hello! How can I help you today?");
    expect(gemini.requests.at(-1)!.body.contents).toEqual([
      { role: "user", parts: [{ text: "Weather in Paris and Tokyo?" }] },
      {
        role: "model",
        parts: [
          { text: "Checking both cities." },
          { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "CiIBVKhc7oDTmE0jbiHhOj0RrhbuVcLIR6f2I3CIJ9bgkjHsQm4a" },
          { functionCall: { name: "get_weather", args: { city: "Tokyo" } } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "get_weather", response: { content: "sunny" } } },
          { functionResponse: { name: "get_weather", response: { content: "sunny" } } },
        ],
      },
    ]);
  });
});
