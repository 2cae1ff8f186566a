import { OpenRouter } from "@openrouter/sdk";
import OpenAI from "openai";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startReplayProvider, type Answer, type ReplayProvider } from "./support/replay-provider.js";

let gw: TestGateway;
let claude: ReplayProvider;
let key: string;
let openai: OpenAI;

/** The upstream model name picks the recording or the failure. */
const answers: Record<string, Answer> = {
  text: { file: "message.json" },
  tools: { file: "tool-use.json" },
  overloaded: { file: "overloaded.json", status: 529 },
  limited: { file: "overloaded.json", status: 429, headers: { "retry-after": "30" } },
  reset: { reset: true },
};
const streams: Record<string, Answer> = {
  text: { file: "stream.sse" },
  tools: { file: "tool-stream.sse" },
  "mid-error": { file: "error-stream.sse" },
  cut: { file: "stream.sse", cutAfterEvents: 4 },
};

const pricing = { prompt: "0.000003", completion: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" };
const supported = ["max_tokens", "temperature", "top_p", "top_k", "stop", "tools", "tool_choice", "parallel_tool_calls", "reasoning"];
const model = (id: string, endpoints: Array<[string, string]>) => ({
  id,
  name: id,
  context_length: 200000,
  input_modalities: ["text", "image", "file"],
  endpoints: endpoints.map(([provider, upstream]) => ({ provider, upstream_model: upstream, pricing, max_completion_tokens: 8192, supported_parameters: supported })),
});

beforeAll(async () => {
  claude = await startReplayProvider(join(import.meta.dirname, "fixtures/anthropic"), (req) => {
    const name = String(req.body.model);
    const plan = (req.body.stream ? streams[name] : undefined) ?? answers[name];
    if (!plan) throw new Error(`no recording for ${name}`);
    return plan;
  });
  const provider = (slug: string) => ({ slug, name: slug, adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" });
  const catalog = {
    providers: [provider("claude-a"), provider("claude-b")],
    models: [
      model("anthropic/text", [["claude-a", "text"]]),
      model("anthropic/tools", [["claude-a", "tools"]]),
      model("anthropic/fallback", [["claude-a", "overloaded"], ["claude-b", "text"]]),
      model("anthropic/limited", [["claude-a", "limited"], ["claude-b", "text"]]),
      model("anthropic/reset", [["claude-a", "reset"], ["claude-b", "text"]]),
      model("anthropic/mid-error", [["claude-a", "mid-error"]]),
      model("anthropic/cut", [["claude-a", "cut"]]),
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), CLAUDE_KEY: "claude-secret" });
  key = String((await gw.call("POST", "/keys", { body: { name: "anthropic" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl });
});
afterAll(async () => {
  await gw?.stop();
  await claude?.stop();
});

const generation = async (id: string) => (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as Record<string, unknown>;
const lastUpstream = () => claude.requests.at(-1)!;
const weatherTool = { type: "function" as const, function: { name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } } } };

describe("Anthropic Messages adapter, buffered", () => {
  it("sends the system prompt apart, images as sources and cache markers as given, and prices cache reads and writes", async () => {
    const { data, response } = await openai.chat.completions
      .create({
        model: "anthropic/text",
        temperature: 1.5,
        stop: "END",
        user: "end-user-1",
        messages: [
          { role: "system", content: "You are terse." },
          {
            role: "user",
            content: [
              { type: "text", text: "A long shared document", cache_control: { type: "ephemeral", ttl: "1h" } } as OpenAI.ChatCompletionContentPartText,
              { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
              { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
            ],
          },
        ],
      })
      .withResponse();
    const upstream = lastUpstream();
    expect(upstream.path).toBe("/v1/messages");
    expect(upstream.headers["x-api-key"]).toBe("claude-secret");
    expect(upstream.headers["anthropic-version"]).toBe("2023-06-01");
    expect(upstream.body).toMatchObject({
      model: "text",
      max_tokens: 8192,
      stop_sequences: ["END"],
      stream: false,
      system: [{ type: "text", text: "You are terse." }],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "A long shared document", cache_control: { type: "ephemeral", ttl: "1h" } },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
            { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
          ],
        },
      ],
    });
    expect((upstream.body.metadata as { user_id: string }).user_id).toMatch(/^[0-9a-f]{32}$/);
    // Above Anthropic's highest temperature, 1: left out, and the model samples at its default.
    expect(upstream.body).not.toHaveProperty("temperature");

    expect(data.choices[0]?.message.content).toBe("Hello! How can I help you today?");
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect((data.choices[0] as unknown as { native_finish_reason: string }).native_finish_reason).toBe("end_turn");
    const usage = data.usage as unknown as { prompt_tokens: number; completion_tokens: number; cost: number; prompt_tokens_details: Record<string, number> };
    // 12 uncached + 1000 read from the cache + 100 written to it
    expect(usage.prompt_tokens).toBe(1112);
    expect(usage.prompt_tokens_details).toEqual({ cached_tokens: 1000, cache_write_tokens: 100 });
    // 12 × $0.000003 + 1000 × $0.0000003 + 100 × $0.00000375 + 10 × $0.000015
    expect(usage.cost).toBeCloseTo(0.000861, 12);
    const stored = await generation(response.headers.get("x-generation-id")!);
    expect(stored).toMatchObject({ provider_name: "claude-a", tokens_prompt: 1112, native_tokens_cached: 1000, finish_reason: "stop" });
    expect(stored.total_cost).toBeCloseTo(0.000861, 12);
  });

  it("puts the top-level cache marker on the last block, and only on marked blocks in explicit mode", async () => {
    const messages = [
      { role: "system", content: "Rules" },
      { role: "user", content: [{ type: "text", text: "First" }, { type: "text", text: "Second" }] },
    ];
    await gw.call("POST", "/chat/completions", { key, body: { model: "anthropic/text", messages, cache_control: { type: "ephemeral" } } });
    const auto = lastUpstream().body.messages as Array<{ content: Array<Record<string, unknown>> }>;
    expect(auto[0]?.content[0]).not.toHaveProperty("cache_control");
    expect(auto[0]?.content[1]).toMatchObject({ text: "Second", cache_control: { type: "ephemeral" } });

    const explicit = [
      { role: "user", content: [{ type: "text", text: "Keep", prompt_cache_breakpoint: { mode: "explicit" } }, { type: "text", text: "Fresh" }] },
    ];
    const res = await gw.call("POST", "/chat/completions", {
      key,
      body: { model: "anthropic/text", messages: explicit, cache_control: { type: "ephemeral" }, prompt_cache_options: { mode: "explicit", ttl: "5m" } },
    });
    expect(res.status).toBe(200);
    const sent = lastUpstream().body.messages as Array<{ content: Array<Record<string, unknown>> }>;
    expect(sent[0]?.content).toEqual([
      { type: "text", text: "Keep", cache_control: { type: "ephemeral", ttl: "5m" } },
      { type: "text", text: "Fresh" },
    ]);
  });

  it("round-trips tools, tool results and thinking through the @openrouter/sdk", async () => {
    const client = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
    const result = await client.chat.send({
      chatRequest: {
        model: "anthropic/tools",
        messages: [{ role: "user", content: "Weather in Paris?" }],
        tools: [weatherTool],
        toolChoice: "required",
        parallelToolCalls: false,
        reasoning: { effort: "high" },
        maxTokens: 8000,
      },
    });
    if (Symbol.asyncIterator in result) throw new Error("expected a buffered completion");
    const sent = lastUpstream().body;
    expect(sent).toMatchObject({
      max_tokens: 8000,
      thinking: { type: "enabled", budget_tokens: 6400 },
      tools: [{ name: "get_weather", description: "Weather by city", input_schema: weatherTool.function.parameters }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
    });
    const choice = result.choices[0]!;
    expect(choice.finishReason).toBe("tool_calls");
    expect(choice.message.content).toBe("Let me check the weather.");
    const call = choice.message.toolCalls?.[0];
    expect(call).toMatchObject({ id: "toolu_01A09q90qw90lq917835lq9", type: "function", function: { name: "get_weather" } });
    expect(JSON.parse(call!.function.arguments)).toEqual({ city: "Paris", unit: "celsius" });
    expect(choice.message.reasoning).toContain("call the tool");

    // The next turn carries the call, its signed reasoning and the tool's answer back.
    const raw = await gw.call("POST", "/chat/completions", { key, body: { model: "anthropic/tools", messages: [{ role: "user", content: "Weather in Paris?" }], tools: [weatherTool] } });
    const message = (raw.body.choices as Array<{ message: Record<string, unknown> }>)[0]!.message;
    await gw.call("POST", "/chat/completions", {
      key,
      body: {
        model: "anthropic/text",
        tools: [weatherTool],
        messages: [
          { role: "user", content: "Weather in Paris?" },
          message,
          { role: "tool", tool_call_id: "toolu_01A09q90qw90lq917835lq9", content: '{"temp": 21}' },
          { role: "user", content: "Thanks" },
        ],
      },
    });
    const turns = lastUpstream().body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(turns.map((t) => t.role)).toEqual(["user", "assistant", "user"]);
    expect(turns[1]?.content).toEqual([
      { type: "thinking", thinking: "The user wants the weather in Paris; I should call the tool.", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" },
      { type: "text", text: "Let me check the weather." },
      { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { city: "Paris", unit: "celsius" } },
    ]);
    expect(turns[2]?.content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_01A09q90qw90lq917835lq9", content: [{ type: "text", text: '{"temp": 21}' }] },
      { type: "text", text: "Thanks" },
    ]);
  });

  it("falls back to the next endpoint on 529, 429 with Retry-After and a reset connection", async () => {
    for (const name of ["fallback", "limited", "reset"]) {
      const res = await gw.call("POST", "/chat/completions", {
        key,
        body: { model: `anthropic/${name}`, messages: [{ role: "user", content: "Hi" }], provider: { order: ["claude-a", "claude-b"] } },
        headers: { "x-openrouter-metadata": "enabled" },
      });
      expect(res.status, name).toBe(200);
      expect(res.body.openrouter_metadata).toMatchObject({ attempt: 2, strategy: "fallback" });
      expect(lastUpstream().body.model).toBe("text");
    }
    // claude-a rests for the 30 s it asked for: the next request goes straight to claude-b.
    const before = claude.requests.length;
    await gw.call("POST", "/chat/completions", { key, body: { model: "anthropic/limited", messages: [{ role: "user", content: "Hi" }], provider: { order: ["claude-a", "claude-b"] } } });
    expect(claude.requests.slice(before).map((r) => r.body.model)).toEqual(["text"]);
  });
});

describe("Anthropic Messages adapter, streamed", () => {
  it("translates text events into chunks with a final usage chunk for the openai client", async () => {
    const stream = await openai.chat.completions.create({ model: "anthropic/text", messages: [{ role: "user", content: "Hi" }], stream: true });
    let text = "";
    let finish: string | null = null;
    let usage: { prompt_tokens: number; completion_tokens: number; cost?: number } | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage as typeof usage;
    }
    expect(lastUpstream().body.stream).toBe(true);
    expect(text).toBe("Hello from Claude");
    expect(finish).toBe("stop");
    expect(usage).toMatchObject({ prompt_tokens: 25, completion_tokens: 15 });
    expect(usage?.cost).toBeCloseTo(25 * 0.000003 + 15 * 0.000015, 12);
  });

  it("streams tool call arguments and reasoning as deltas", async () => {
    const stream = await openai.chat.completions.create({ model: "anthropic/tools", messages: [{ role: "user", content: "Weather?" }], tools: [weatherTool], stream: true });
    let args = "";
    let reasoning = "";
    let content = "";
    let name: string | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & { reasoning?: string }) | undefined;
      content += delta?.content ?? "";
      reasoning += delta?.reasoning ?? "";
      for (const call of delta?.tool_calls ?? []) {
        name ??= call.function?.name;
        args += call.function?.arguments ?? "";
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(content).toBe("Checking.");
    expect(reasoning).toBe("I need the weather tool.");
    expect(name).toBe("get_weather");
    expect(JSON.parse(args)).toEqual({ city: "Paris" });
    expect(finish).toBe("tool_calls");
  });

  it("ends with an in-band error frame on an error event or a cut stream, and records the spend", async () => {
    for (const name of ["mid-error", "cut"]) {
      const res = await fetch(`${gw.apiUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: `anthropic/${name}`, messages: [{ role: "user", content: "Hi" }], stream: true }),
      });
      expect(res.status).toBe(200);
      const frames = (await res.text()).split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6));
      expect(frames.at(-1), name).not.toBe("[DONE]");
      const last = JSON.parse(frames.at(-1)!) as { error: { code: number }; choices: Array<{ finish_reason: string }> };
      expect(last.choices[0]?.finish_reason).toBe("error");
      const stored = await generation(res.headers.get("x-generation-id")!);
      expect(stored).toMatchObject({ finish_reason: "error", streamed: true });
      expect(stored.total_cost as number).toBeGreaterThan(0);
    }
  });
});
