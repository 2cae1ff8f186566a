import { readFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PartBatch } from "../generation/parts.js";
import { google } from "./google.js";
import { UpstreamError, type UpstreamTarget } from "./types.js";

const fixtures = join(import.meta.dirname, "../../../../tests/fixtures/google");

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** What the fake answers for one upstream model: a recorded file, or a raw body. */
interface Plan {
  file?: string;
  raw?: string;
  status?: number;
  headers?: Record<string, string>;
  /** Sends the event stream with CRLF line ends, as Gemini does. */
  crlf?: boolean;
}

const plans: Record<string, Plan> = {
  text: { file: "generate.json" },
  tools: { file: "tools.json" },
  "max-tokens": { file: "max-tokens.json" },
  safety: { file: "safety.json" },
  blocked: { file: "blocked.json" },
  limited: { file: "rate-limited.json", status: 429, headers: { "retry-after": "7" } },
  garbage: { raw: "<html>upstream proxy error</html>" },
  empty: { raw: "{}" },
  "text-stream": { file: "stream.sse", crlf: true },
  "tools-stream": { file: "tools-stream.sse" },
  "malformed-stream": { file: "malformed.sse" },
  "cut-stream": { file: "cut.sse" },
};

let server: Server;
let baseUrl: string;
const requests: Received[] = [];

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    requests.push({ url: req.url ?? "", headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown> });
    const model = /\/models\/([^:]+):/.exec(req.url ?? "")?.[1] ?? "";
    const plan = plans[model];
    if (!plan) return void res.writeHead(404).end();
    const stream = plan.file?.endsWith(".sse") ?? false;
    let content = plan.raw ?? (await readFile(join(fixtures, plan.file ?? ""), "utf8"));
    if (plan.crlf) content = content.replace(/\n/g, "\r\n");
    res.writeHead(plan.status ?? 200, { "content-type": stream ? "text/event-stream" : "application/json", ...plan.headers });
    if (!stream) return void res.end(content);
    // Small writes, so that events arrive split across reads.
    for (let i = 0; i < content.length; i += 37) {
      res.write(content.slice(i, i + 37));
      await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1beta/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const target = (model: string, keyed = true): UpstreamTarget => ({
  provider: "google-ai-studio",
  baseUrl,
  apiKey: keyed ? "gemini-secret" : undefined,
  upstreamModel: model,
  maxCompletionTokens: 65536,
});
const hello = [{ role: "user", content: "Hi" }];
const complete = (model: string, body: Record<string, unknown> = { messages: hello }, keyed = true) =>
  google.complete(body, target(model, keyed), new AbortController().signal);
const lastRequest = () => requests.at(-1)!;

async function collect(model: string, body: Record<string, unknown> = { messages: hello }): Promise<PartBatch[]> {
  const out: PartBatch[] = [];
  for await (const batch of await google.stream(body, target(model), new AbortController().signal)) out.push(batch);
  return out;
}

/** The ids of the tool calls the batches start, in order. */
const startedCallIds = (batches: PartBatch[]) => batches.flat().flatMap((p) => (p.type === "tool-call-start" ? [p.id] : []));

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

const weatherTool = { type: "function", function: { name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } } } };

describe("Google Gemini adapter, request translation", () => {
  it("sends the system prompt apart, roles as user and model, images inline or by URI, and the key in its header", async () => {
    await complete("text", {
      model: "google/gemini-2.5-flash",
      user: "end-user-1",
      plugins: [{ id: "web" }],
      messages: [
        { role: "system", content: "Be brief." },
        { role: "developer", content: [{ type: "text", text: "Answer in English." }] },
        {
          role: "user",
          content: [
            { type: "text", text: "What is in these?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
            { type: "image_url", image_url: { url: "https://example.com/cat.webp?size=large" } },
            { type: "image_url", image_url: { url: "https://example.com/photo" } },
          ],
        },
        { role: "assistant", content: "A cat and a photo." },
        { role: "user", content: "Thanks" },
      ],
    });
    const req = lastRequest();
    expect(req.url).toBe("/v1beta/models/text:generateContent");
    expect(req.headers["x-goog-api-key"]).toBe("gemini-secret");
    expect(req.body).toEqual({
      systemInstruction: { parts: [{ text: "Be brief.\n\nAnswer in English." }] },
      contents: [
        {
          role: "user",
          parts: [
            { text: "What is in these?" },
            { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
            { fileData: { mimeType: "image/webp", fileUri: "https://example.com/cat.webp?size=large" } },
            { fileData: { mimeType: "image/jpeg", fileUri: "https://example.com/photo" } },
          ],
        },
        { role: "model", parts: [{ text: "A cat and a photo." }] },
        { role: "user", parts: [{ text: "Thanks" }] },
      ],
    });
  });

  it("maps sampling options, stop sequences, JSON schema and reasoning into generationConfig, and nothing unknown", async () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    await complete("text", {
      messages: hello,
      temperature: 0.4,
      top_p: 0.9,
      top_k: 40,
      max_tokens: 100,
      max_completion_tokens: 200,
      stop: "END",
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      n: 2,
      response_format: { type: "json_schema", json_schema: { name: "answer", strict: true, schema } },
      reasoning: { max_tokens: 2048 },
      logit_bias: { "50256": -100 },
      service_tier: "auto",
    });
    expect(lastRequest().body.generationConfig).toEqual({
      temperature: 0.4,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 200,
      stopSequences: ["END"],
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      candidateCount: 2,
      responseMimeType: "application/json",
      responseJsonSchema: schema,
      thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
    });
    expect(Object.keys(lastRequest().body).sort()).toEqual(["contents", "generationConfig"]);
  });

  it("turns reasoning efforts into thinking budgets and leaves thoughts out when reasoning is excluded", async () => {
    const config = async (body: Record<string, unknown>) => {
      await complete("text", { messages: hello, ...body });
      return lastRequest().body.generationConfig;
    };
    expect(await config({ reasoning_effort: "low" })).toEqual({ thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
    expect(await config({ reasoning: { effort: "medium" } })).toEqual({ thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } });
    expect(await config({ reasoning: { effort: "high", exclude: true } })).toEqual({ thinkingConfig: { thinkingBudget: 24576 } });
    expect(await config({ reasoning: { enabled: false } })).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(await config({ reasoning: { enabled: true } })).toEqual({ thinkingConfig: { includeThoughts: true } });
    expect(await config({ max_tokens: 50, stop: ["a", "b"], response_format: { type: "json_object" } })).toEqual({
      maxOutputTokens: 50,
      stopSequences: ["a", "b"],
      responseMimeType: "application/json",
    });
    expect(await config({})).toBeUndefined();
  });

  it("declares tools, maps tool_choice, and sends no key header when the endpoint has none", async () => {
    const toolConfig = async (choice: unknown) => {
      await complete("text", { messages: hello, tools: [weatherTool], tool_choice: choice }, false);
      return lastRequest().body.toolConfig;
    };
    expect(await toolConfig("auto")).toEqual({ functionCallingConfig: { mode: "AUTO" } });
    expect(await toolConfig("none")).toEqual({ functionCallingConfig: { mode: "NONE" } });
    expect(await toolConfig("required")).toEqual({ functionCallingConfig: { mode: "ANY" } });
    expect(await toolConfig({ type: "function", function: { name: "get_weather" } })).toEqual({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] },
    });
    expect(await toolConfig(undefined)).toBeUndefined();
    expect(lastRequest().body.tools).toEqual([
      { functionDeclarations: [{ name: "get_weather", description: "Weather by city", parameters: weatherTool.function.parameters }] },
    ]);
    expect(lastRequest().headers["x-goog-api-key"]).toBeUndefined();
  });

  it("refuses content it cannot send, without trying another endpoint", async () => {
    const error = await failure(complete("text", { messages: [{ role: "user", content: [{ type: "video_url", video_url: { url: "x" } }] }] }));
    expect(error.status).toBe(400);
    expect(error.retryable).toBe(false);
  });
});

describe("Google Gemini adapter, buffered", () => {
  it("returns text, thoughts as reasoning, and usage with thinking and cached tokens", async () => {
    const result = await complete("text");
    expect(result).toEqual({
      id: "mCQoaKCbHr6mz7IP0cfJ-Qk",
      choices: [
        {
          index: 0,
          text: "Hello! How can I help you today?",
          reasoning: "**Greeting the user**\n\nA short, friendly hello is enough here.",
          reasoningDetails: [],
          toolCalls: [],
          finishReason: "STOP",
          fields: {},
          choiceFields: {},
        },
      ],
      usage: { promptTokens: 1210, completionTokens: 51, cachedTokens: 1024, cacheWriteTokens: 0, reasoningTokens: 42 },
      systemFingerprint: null,
      serviceTier: null,
    });
  });

  it("returns function calls as tool calls, and takes them and their results back on the next turn", async () => {
    const result = await complete("tools", { messages: [{ role: "user", content: "Weather in Paris and Tokyo?" }], tools: [weatherTool] });
    expect(result.choices).toHaveLength(1);
    const choice = result.choices[0]!;
    const [paris, tokyo] = choice.toolCalls;
    expect(paris!.id).toMatch(/^call_\w+$/);
    expect(tokyo!.id).toMatch(/^call_\w+$/);
    expect(paris!.id).not.toBe(tokyo!.id);
    expect(choice).toEqual({
      index: 0,
      text: null,
      reasoning: null,
      reasoningDetails: [
        { type: "reasoning.encrypted", data: "CiIBVKhc7oDTmE0jbiHhOj0RrhbuVcLIR6f2I3CIJ9bgkjHsQm4a", id: paris!.id, format: "google-gemini-v1", index: 0 },
      ],
      toolCalls: [
        { id: paris!.id, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        { id: tokyo!.id, type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo","units":"celsius"}' } },
      ],
      finishReason: "tool_calls",
      fields: {},
      choiceFields: {},
    });
    expect(result.usage).toEqual({ promptTokens: 64, completionTokens: 88, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 58 });

    await complete("text", {
      messages: [
        { role: "user", content: "Weather in Paris and Tokyo?" },
        {
          role: "assistant",
          content: choice.text,
          tool_calls: [...choice.toolCalls, { id: "call_broken", type: "function", function: { name: "get_time", arguments: "{not json" } }],
          reasoning_details: choice.reasoningDetails,
        },
        { role: "tool", tool_call_id: tokyo!.id, content: '{"temp":24,"sky":"clear"}' },
        { role: "tool", tool_call_id: paris!.id, content: "18 degrees and raining" },
        { role: "tool", tool_call_id: "call_broken", content: [{ type: "text", text: "[1,2]" }] },
        { role: "user", content: "And tomorrow?" },
      ],
      tools: [weatherTool],
    });
    expect(lastRequest().body.contents).toEqual([
      { role: "user", parts: [{ text: "Weather in Paris and Tokyo?" }] },
      {
        role: "model",
        parts: [
          { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "CiIBVKhc7oDTmE0jbiHhOj0RrhbuVcLIR6f2I3CIJ9bgkjHsQm4a" },
          { functionCall: { name: "get_weather", args: { city: "Tokyo", units: "celsius" } } },
          { functionCall: { name: "get_time", args: {} } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "get_weather", response: { temp: 24, sky: "clear" } } },
          { functionResponse: { name: "get_weather", response: { content: "18 degrees and raining" } } },
          { functionResponse: { name: "get_time", response: { content: "[1,2]" } } },
        ],
      },
      { role: "user", parts: [{ text: "And tomorrow?" }] },
    ]);
  });

  it("maps MAX_TOKENS to length, SAFETY to content_filter, and a blocked prompt to one filtered choice", async () => {
    const long = await complete("max-tokens");
    const choice = (text: string, finishReason: string) => ({ index: 0, text, reasoning: null, reasoningDetails: [], toolCalls: [], finishReason, fields: {}, choiceFields: {} });
    expect(long.choices).toEqual([choice("Once upon a time, in a land far", "MAX_TOKENS")]);
    expect(long.usage).toEqual({ promptTokens: 7, completionTokens: 8, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });

    const unsafe = await complete("safety");
    expect(unsafe.choices).toEqual([choice("", "SAFETY")]);

    const blocked = await complete("blocked");
    expect(blocked.id).toBe("ryQoaMXiF8-mz7IPsqbO4Qk");
    expect(blocked.choices).toEqual([choice("", "content_filter")]);
    expect(blocked.usage?.promptTokens).toBe(13);
  });

  it("makes a 429 with Retry-After a retryable error with its delay", async () => {
    const error = await failure(complete("limited"));
    expect(error.status).toBe(429);
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(7000);
    expect(error.message).toContain("RESOURCE_EXHAUSTED");

    const streamed = await failure(collect("limited"));
    expect(streamed.retryAfterMs).toBe(7000);
  });

  it("makes a body that is not a GenerateContentResponse a retryable 502", async () => {
    for (const model of ["garbage", "empty"]) {
      const error = await failure(complete(model));
      expect(error.status).toBe(502);
      expect(error.retryable).toBe(true);
    }
  });
});

describe("Google Gemini adapter, streamed", () => {
  it("streams thoughts and text as parts in order, then the last usage in a batch of its own", async () => {
    const batches = await collect("text-stream");
    expect(lastRequest().url).toBe("/v1beta/models/text-stream:streamGenerateContent?alt=sse");
    expect(batches).toEqual([
      [
        { type: "metadata", id: "tiQoaP3pLZ6nz7IPz9Hj-Qk" },
        { type: "passthrough", choice: 0, fields: { role: "assistant" } },
        { type: "reasoning", choice: 0, text: "**Choosing a greeting**\n\nA short hello fits." },
      ],
      [{ type: "text", choice: 0, text: "Hello" }],
      [{ type: "text", choice: 0, text: " from" }],
      [
        { type: "text", choice: 0, text: " Gemini!" },
        { type: "finish", choice: 0, reason: "STOP" },
      ],
      [{ type: "usage", usage: { promptTokens: 8, completionTokens: 35, cachedTokens: 4, cacheWriteTokens: 0, reasoningTokens: 31 } }],
    ]);
  });

  it("streams each function call as a whole tool call, one index per call", async () => {
    const batches = await collect("tools-stream", { messages: hello, tools: [weatherTool] });
    const ids = startedCallIds(batches);
    expect(ids).toHaveLength(2);
    const [paris, tokyo] = ids as [string, string];
    expect(paris).toMatch(/^call_\w+$/);
    expect(tokyo).toMatch(/^call_\w+$/);
    expect(paris).not.toBe(tokyo);
    expect(batches).toEqual([
      [
        { type: "metadata", id: "vSQoaJ3nMJ6nz7IPz9Hj-Qk" },
        { type: "passthrough", choice: 0, fields: { role: "assistant" } },
        { type: "text", choice: 0, text: "Checking both cities." },
      ],
      [
        {
          type: "reasoning-detail",
          choice: 0,
          detail: { type: "reasoning.encrypted", data: "CiIBVKhc7oDTmE0jbiHhOj0RrhbuVcLIR6f2I3CIJ9bgkjHsQm4a", id: paris, format: "google-gemini-v1", index: 0 },
        },
        { type: "tool-call-start", choice: 0, index: 0, id: paris, name: "get_weather" },
        { type: "tool-call-delta", choice: 0, index: 0, arguments: '{"city":"Paris"}' },
        { type: "tool-call-end", choice: 0, index: 0 },
      ],
      [
        { type: "tool-call-start", choice: 0, index: 1, id: tokyo, name: "get_weather" },
        { type: "tool-call-delta", choice: 0, index: 1, arguments: '{"city":"Tokyo"}' },
        { type: "tool-call-end", choice: 0, index: 1 },
        { type: "finish", choice: 0, reason: "tool_calls" },
      ],
      [{ type: "usage", usage: { promptTokens: 64, completionTokens: 36, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 } }],
    ]);
  });

  it("fails on a chunk that does not parse, after passing on what came before it", async () => {
    const seen: PartBatch[] = [];
    const stream = await google.stream({ messages: hello }, target("malformed-stream"), new AbortController().signal);
    const error = await failure(
      (async () => {
        for await (const batch of stream) seen.push(batch);
      })(),
    );
    expect(error.message).toBe("google sent a chunk that does not parse");
    expect(error.status).toBe(502);
    expect(error.retryable).toBe(false);
    expect(seen).toEqual([
      [
        { type: "metadata", id: "wCQoaK2pBp6nz7IPz9Hj-Qk" },
        { type: "passthrough", choice: 0, fields: { role: "assistant" } },
        { type: "text", choice: 0, text: "Partial" },
      ],
    ]);
  });

  it("fails a stream that ends without a finish reason, after passing on its text", async () => {
    const seen: PartBatch[] = [];
    const stream = await google.stream({ messages: hello }, target("cut-stream"), new AbortController().signal);
    const error = await failure(
      (async () => {
        for await (const batch of stream) seen.push(batch);
      })(),
    );
    expect(error.message).toBe("google's stream ended before a finish reason");
    expect(error.status).toBe(502);
    expect(seen.flat()).toContainEqual({ type: "text", choice: 0, text: "Half an ans" });
  });
});
