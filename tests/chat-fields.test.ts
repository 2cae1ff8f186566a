import OpenAI, { APIError } from "openai";
import type { ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startFakeUpstream, type FakeUpstream, type Received, type Reply } from "./support/recording-upstream.js";

/**
 * Chat Completions fields the openai SDK (6.x) types and OpenAI-compatible providers send, through the whole
 * gateway with the official client against a fake OpenAI-compatible provider: what the gateway accepts or
 * refuses, what the provider receives, and what the client reads back.
 */
let gw: TestGateway;
let up: FakeUpstream;
let key: string;
let openai: OpenAI;

const messages = [{ role: "user" as const, content: "What is 2 + 2?" }];
const weather = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };
const clock = { type: "function" as const, function: { name: "get_time", parameters: { type: "object", properties: {} } } };
/** Google's OpenAI-compatible API carries a call's thought signature here. */
const signature = { google: { thought_signature: "c2lnbmF0dXJl" } };

const usage = { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 };
/** Mistral's Magistral answer: a thinking part (its text in parts of its own), then the answer's text parts. */
const magistral = [
  { type: "thinking", thinking: [{ type: "text", text: "Two and two " }, { type: "text", text: "make four." }] },
  { type: "text", text: "The answer " },
  { type: "reference", reference_ids: [1] },
  { type: "text", text: "is 4." },
];
const geminiCall = { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' }, extra_content: signature };

/** What the fake model says, by upstream model: a message, buffered. */
const answers: Record<string, Record<string, unknown>> = {
  ok: { role: "assistant", content: "hi" },
  magistral: { role: "assistant", content: magistral },
  gemini: { role: "assistant", content: null, tool_calls: [geminiCall] },
};

/** The same, streamed: the deltas of one choice, in order. */
const deltas: Record<string, Array<Record<string, unknown>>> = {
  ok: [{ role: "assistant", content: "hi" }],
  magistral: [
    { role: "assistant", content: [{ type: "thinking", thinking: [{ type: "text", text: "Two and two " }] }] },
    { content: [{ type: "thinking", thinking: [{ type: "text", text: "make four." }] }] },
    { content: [{ type: "text", text: "The answer " }, { type: "reference", reference_ids: [1] }] },
    { content: "is 4." },
  ],
  gemini: [{ role: "assistant", content: null, tool_calls: [{ index: 0, ...geminiCall }] }],
};

const sse = (model: string, frames: Array<Record<string, unknown>>) =>
  `${frames.map((frame) => `data: ${JSON.stringify({ id: "up-1", object: "chat.completion.chunk", created: 1, model, ...frame })}\n\n`).join("")}data: [DONE]\n\n`;

/** An answer in OpenAI's shape: one choice per `n` asked for; a text completion on the legacy route. */
function reply(r: Received): Reply {
  const model = String(r.body.model);
  if (r.path.endsWith("/v1/completions")) {
    return { json: { id: "up-1", object: "text_completion", created: 1, model, choices: [{ index: 0, text: "hi", finish_reason: "stop", logprobs: null }], usage } };
  }
  const message = answers[model] ?? answers.ok!;
  const finish = Array.isArray(message.tool_calls) ? "tool_calls" : "stop";
  if (r.body.stream) {
    const frames: Array<Record<string, unknown>> = (deltas[model] ?? deltas.ok!).map((delta) => ({ choices: [{ index: 0, delta, finish_reason: null }] }));
    frames.push({ choices: [{ index: 0, delta: {}, finish_reason: finish }] }, { choices: [], usage });
    return { headers: { "content-type": "text/event-stream" }, raw: sse(model, frames) };
  }
  const n = typeof r.body.n === "number" ? r.body.n : 1;
  const choices = Array.from({ length: n }, (_, index) => ({ index, message, finish_reason: finish }));
  return { json: { id: "up-1", object: "chat.completion", created: 1, model, choices, usage } };
}

const pricing = { prompt: "0.000001", completion: "0.000002" };
const model = (id: string, upstream: string) => ({ id, name: id, context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: upstream, pricing }] });

beforeAll(async () => {
  up = await startFakeUpstream();
  up.answer(reply);
  const catalog = {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: `${up.origin}/v1`, api_key_env: "ALPHA_KEY" }],
    models: [model("fields/ok", "ok"), model("fields/magistral", "magistral"), model("fields/gemini", "gemini")],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  key = String((await gw.call("POST", "/keys", { body: { name: "fields" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.stop();
  await up?.stop();
});

/** The error a call failed with; throws when it succeeded. */
async function failure(call: Promise<unknown>): Promise<APIError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error("expected the call to fail");
}

/** Expects a 400 whose message says `message`, sent before a provider was called. */
async function refused(call: () => Promise<unknown>, message: RegExp) {
  const before = up.requests.length;
  const error = await failure(call());
  expect(error.status).toBe(400);
  expect(error.message).toMatch(message);
  expect(up.requests.length).toBe(before);
}

/** Chat parameters as sent on the wire, whatever the SDK's types say of them. */
const params = (body: Record<string, unknown>) => ({ model: "fields/ok", messages, ...body }) as unknown as ChatCompletionCreateParamsNonStreaming;

describe("n", () => {
  it.each([0, -1, 1.5, "3", 129])("refuses n = %j with a 400 naming n, before a provider is called", async (n) => {
    await refused(() => openai.chat.completions.create(params({ n })), /Invalid body: n: /);
  });

  it("sends a whole number from 1 to 128 to the provider, and null as not set", async () => {
    const answer = await openai.chat.completions.create({ model: "fields/ok", messages, n: 2 });
    expect(up.last().body.n).toBe(2);
    expect(answer.choices.map((c) => c.message.content)).toEqual(["hi", "hi"]);
    expect((await openai.chat.completions.create({ model: "fields/ok", messages, n: 128 })).choices).toHaveLength(128);
    await openai.chat.completions.create({ model: "fields/ok", messages, n: null });
    expect(up.last().body.n ?? null).toBeNull();
  });

  it("is checked the same way on the legacy /completions, which takes only 1", async () => {
    for (const n of [0, 1.5, "3"]) await refused(() => openai.completions.create({ model: "fields/ok", prompt: "Hi", n: n as number }), /Invalid body: n: /);
    await refused(() => openai.completions.create({ model: "fields/ok", prompt: "Hi", n: 2 }), /n: only 1 is supported/);
    expect((await openai.completions.create({ model: "fields/ok", prompt: "Hi", n: 1 })).choices[0]?.text).toBe("hi");
  });
});

describe("tool_choice allowed_tools", () => {
  const allowed = { type: "allowed_tools" as const, allowed_tools: { mode: "required" as const, tools: [{ type: "function", function: { name: "get_weather" } }] } };

  it("reaches an OpenAI-compatible provider whole", async () => {
    await openai.chat.completions.create({ model: "fields/ok", messages, tools: [weather, clock], tool_choice: allowed });
    expect(up.last().body.tool_choice).toEqual(allowed);
    const auto = { type: "allowed_tools" as const, allowed_tools: { mode: "auto" as const, tools: [{ type: "function", function: { name: "get_weather" } }, { type: "function", function: { name: "get_time" } }] } };
    await openai.chat.completions.create({ model: "fields/ok", messages, tools: [weather, clock], tool_choice: auto });
    expect(up.last().body.tool_choice).toEqual(auto);
  });

  it.each([
    ["without its allowed_tools", { type: "allowed_tools" }, /tool_choice: allowed_tools: /],
    ["with a mode OpenAI does not take", { type: "allowed_tools", allowed_tools: { mode: "sometimes", tools: [{ type: "function", function: { name: "get_weather" } }] } }, /tool_choice: allowed_tools\.mode: /],
    ["with no tool", { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [] } }, /tool_choice(: |\.)allowed_tools\.tools: must name at least 1 function/],
    ["with a tool that is not a function", { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [{ type: "custom", custom: { name: "x" } }] } }, /tool_choice: allowed_tools\.tools\.0\.type: /],
    ["with a function without a name", { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [{ type: "function" }] } }, /tool_choice: allowed_tools\.tools\.0\.function: /],
  ])("is refused %s, naming what is wrong", async (_, toolChoice, message) => {
    await refused(() => openai.chat.completions.create(params({ tools: [weather], tool_choice: toolChoice })), message);
  });
});

describe("null as the openai SDK types it", () => {
  it("is taken as not set for stream, metadata and modalities", async () => {
    const answer = await openai.chat.completions.create({ model: "fields/ok", messages, stream: null, metadata: null, modalities: null });
    expect(answer.object).toBe("chat.completion");
    expect(answer.choices[0]?.message.content).toBe("hi");
    const sent = up.last().body;
    expect(sent.stream).toBe(false);
    expect(sent).not.toHaveProperty("metadata");
    expect(sent.modalities ?? null).toBeNull();
  });
});

describe("response_format json_object with a schema", () => {
  it("keeps the schema, as Fireworks and Together take it", async () => {
    const schema = { type: "object", properties: { answer: { type: "number" } }, required: ["answer"] };
    await openai.chat.completions.create(params({ response_format: { type: "json_object", schema } }));
    expect(up.last().body.response_format).toEqual({ type: "json_object", schema });
    await openai.chat.completions.create({ model: "fields/ok", messages, response_format: { type: "json_object" } });
    expect(up.last().body.response_format).toEqual({ type: "json_object" });
    await refused(() => openai.chat.completions.create(params({ response_format: { type: "json_object", schema: "object" } })), /response_format\.schema: /);
  });
});

describe("tool_calls[].extra_content", () => {
  it("reaches the provider in an assistant message sent back", async () => {
    const history = [
      ...messages,
      { role: "assistant" as const, content: null, tool_calls: [geminiCall] },
      { role: "tool" as const, tool_call_id: "call_1", content: "Sunny" },
    ];
    await openai.chat.completions.create(params({ messages: history, tools: [weather] }));
    const sent = up.last().body.messages as Array<{ tool_calls?: unknown[] }>;
    expect(sent[1]?.tool_calls).toEqual([geminiCall]);
  });

  it("comes back to the client on a buffered answer", async () => {
    const answer = await openai.chat.completions.create({ model: "fields/gemini", messages, tools: [weather] });
    expect(answer.choices[0]?.message.tool_calls).toEqual([geminiCall]);
    expect(answer.choices[0]?.finish_reason).toBe("tool_calls");
  });
});

describe("message content as an array of parts (Mistral's Magistral)", () => {
  it("answers its text parts as content and its thinking as reasoning, buffered", async () => {
    const answer = await openai.chat.completions.create({ model: "fields/magistral", messages });
    const message = answer.choices[0]?.message as OpenAI.ChatCompletionMessage & { reasoning?: string };
    expect(message.content).toBe("The answer is 4.");
    expect(message.reasoning).toBe("Two and two make four.");
    expect(answer.usage?.completion_tokens).toBe(9);
  });

  it("streams its text parts as content and its thinking as reasoning", async () => {
    const stream = await openai.chat.completions.create({ model: "fields/magistral", messages, stream: true });
    let content = "";
    let reasoning = "";
    for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
      const delta = chunk.choices[0]?.delta as (ChatCompletionChunk.Choice.Delta & { reasoning?: string }) | undefined;
      content += delta?.content ?? "";
      reasoning += delta?.reasoning ?? "";
    }
    expect(content).toBe("The answer is 4.");
    expect(reasoning).toBe("Two and two make four.");
  });
});

describe("tool_calls[].extra_content, streamed", () => {
  it("comes back to the client on the chunk that starts the call", async () => {
    const stream = await openai.chat.completions.create({ model: "fields/gemini", messages, tools: [weather], stream: true });
    const calls: unknown[] = [];
    for await (const chunk of stream) calls.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
    expect(calls[0]).toMatchObject({ index: 0, id: "call_1", extra_content: signature });
  });
});
