import { OpenRouter } from "@openrouter/sdk";
import OpenAI from "openai";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startReplayProvider, type Answer, type ReplayProvider } from "./support/replay-provider.js";

let gw: TestGateway;
let gemini: ReplayProvider;
let key: string;
let openai: OpenAI;

/** The model name in the path picks the recording or the failure. */
const answers: Record<string, Answer> = {
  text: { file: "generate.json" },
  long: { file: "max-tokens.json" },
  limited: { file: "rate-limited.json", status: 429, headers: { "retry-after": "30" } },
};
const streams: Record<string, Answer> = {
  text: { file: "stream.sse" },
  tools: { file: "tools-stream.sse" },
};

const pricing = { prompt: "0.0000003", completion: "0.0000025", input_cache_read: "0.000000075" };
const model = (id: string, endpoints: Array<[string, string]>) => ({
  id,
  name: id,
  context_length: 1000000,
  endpoints: endpoints.map(([provider, upstream]) => ({
    provider,
    upstream_model: upstream,
    pricing,
    supported_parameters: ["temperature", "max_tokens", "tools", "tool_choice", "reasoning", "response_format"],
  })),
});

beforeAll(async () => {
  gemini = await startReplayProvider(join(import.meta.dirname, "fixtures/google"), (req) => {
    const [, name, method] = /\/models\/([^:]+):(\w+)/.exec(req.path) ?? [];
    const plan = (method === "streamGenerateContent" ? streams : answers)[name ?? ""];
    if (!plan) throw new Error(`no recording for ${req.path}`);
    return plan;
  });
  const provider = (slug: string) => ({ slug, name: slug, adapter: "google", base_url: gemini.baseUrl, api_key_env: "GEMINI_KEY" });
  const catalog = {
    providers: [provider("gemini-a"), provider("gemini-b")],
    models: [
      model("google/text", [["gemini-a", "text"]]),
      model("google/long", [["gemini-a", "long"]]),
      model("google/tools", [["gemini-a", "tools"]]),
      model("google/limited", [["gemini-a", "limited"], ["gemini-b", "text"]]),
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), GEMINI_KEY: "gemini-secret" });
  key = String((await gw.call("POST", "/keys", { body: { name: "google" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl });
});
afterAll(async () => {
  await gw?.stop();
  await gemini?.stop();
});

const lastUpstream = () => gemini.requests.at(-1)!;

describe("Gemini adapter through the gateway", () => {
  it("answers the @openrouter/sdk with text, reasoning, and thinking tokens priced as completion", async () => {
    const client = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
    const result = await client.chat.send({
      chatRequest: {
        model: "google/text",
        messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }],
        temperature: 0.2,
        reasoning: { effort: "low" },
      },
    });
    if (Symbol.asyncIterator in result) throw new Error("expected a buffered completion");
    const upstream = lastUpstream();
    expect(upstream.path).toBe("/v1/models/text:generateContent");
    expect(upstream.headers["x-goog-api-key"]).toBe("gemini-secret");
    expect(upstream.body).toEqual({
      contents: [{ role: "user", parts: [{ text: "Hi" }] }],
      systemInstruction: { parts: [{ text: "Be brief." }] },
      generationConfig: { temperature: 0.2, thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } },
    });
    const choice = result.choices[0]!;
    expect(choice.message.content).toBe("Hello! How can I help you today?");
    expect(choice.message.reasoning).toContain("Greeting the user");
    expect(choice.finishReason).toBe("stop");
    const usage = result.usage!;
    expect(usage.promptTokens).toBe(1210);
    expect(usage.completionTokens).toBe(51); // 9 answer + 42 thinking
    expect(usage.completionTokensDetails?.reasoningTokens).toBe(42);
    expect(usage.promptTokensDetails?.cachedTokens).toBe(1024);
    // 186 × $0.0000003 + 1024 × $0.000000075 + 51 × $0.0000025
    expect(usage.cost).toBeCloseTo(186 * 0.0000003 + 1024 * 0.000000075 + 51 * 0.0000025, 12);
  });

  it("reports MAX_TOKENS as length, keeping the native reason", async () => {
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "google/long", messages: [{ role: "user", content: "A story" }], max_tokens: 8 } });
    expect(res.status).toBe(200);
    expect((lastUpstream().body.generationConfig as Record<string, unknown>).maxOutputTokens).toBe(8);
    expect((res.body.choices as Array<Record<string, unknown>>)[0]).toMatchObject({ finish_reason: "length", native_finish_reason: "MAX_TOKENS" });
  });

  it("passes image_config and modalities on to Gemini as imageConfig and responseModalities", async () => {
    const res = await gw.call("POST", "/chat/completions", {
      key,
      body: { model: "google/text", messages: [{ role: "user", content: "Draw a cat" }], modalities: ["image", "text"], image_config: { aspect_ratio: "16:9", image_size: "2K" } },
    });
    expect(res.status).toBe(200);
    expect(lastUpstream().body.generationConfig).toMatchObject({ responseModalities: ["IMAGE", "TEXT"], imageConfig: { aspectRatio: "16:9", imageSize: "2K" } });
  });

  it("streams text and parallel tool calls to the openai client, with usage at the end", async () => {
    const text = await openai.chat.completions.create({ model: "google/text", messages: [{ role: "user", content: "Hi" }], stream: true });
    let content = "";
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of text) {
      content += chunk.choices[0]?.delta.content ?? "";
      usage = chunk.usage ?? usage;
    }
    expect(lastUpstream().path).toBe("/v1/models/text:streamGenerateContent?alt=sse");
    expect(content.length).toBeGreaterThan(0);
    expect(usage?.prompt_tokens).toBeGreaterThan(0);

    const tools = await openai.chat.completions.create({
      model: "google/tools",
      messages: [{ role: "user", content: "Weather in Paris and Tokyo?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
      tool_choice: "required",
      stream: true,
    });
    const calls = new Map<number, { name?: string; args: string }>();
    let finish: string | null = null;
    for await (const chunk of tools) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        const entry = calls.get(call.index) ?? { args: "" };
        entry.name ??= call.function?.name;
        entry.args += call.function?.arguments ?? "";
        calls.set(call.index, entry);
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(lastUpstream().body).toMatchObject({ toolConfig: { functionCallingConfig: { mode: "ANY" } } });
    expect([...calls.values()].map((c) => [c.name, JSON.parse(c.args)])).toEqual([
      ["get_weather", { city: "Paris" }],
      ["get_weather", { city: "Tokyo" }],
    ]);
    expect(finish).toBe("tool_calls");
  });

  it("falls back to the next endpoint when Gemini answers 429", async () => {
    const res = await gw.call("POST", "/chat/completions", {
      key,
      body: { model: "google/limited", messages: [{ role: "user", content: "Hi" }], provider: { order: ["gemini-a", "gemini-b"] } },
      headers: { "x-openrouter-metadata": "enabled" },
    });
    expect(res.status).toBe(200);
    expect(res.body.openrouter_metadata).toMatchObject({ attempt: 2, strategy: "fallback" });
    expect(lastUpstream().path).toBe("/v1/models/text:generateContent");
  });
});
