import Anthropic from "@anthropic-ai/sdk";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { greeting, startFakeAnthropic, type FakeAnthropic } from "./support/fake-anthropic.js";
import { startFakeChat, type ChatReply, type FakeChat } from "./support/fake-chat-script.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startReplayProvider, type ReplayProvider } from "./support/replay-provider.js";

/**
 * The Messages API through the gateway to endpoints of other wire formats: the Anthropic SDK's requests
 * reach an OpenAI-compatible server (and Gemini) as their translation, and their answers come back as
 * Anthropic's blocks and events. What only Anthropic's API can read is refused by name, or routed to an
 * Anthropic endpoint of the same model.
 */
type Json = Record<string, unknown>;

let gw: TestGateway;
let chat: FakeChat;
let claude: FakeAnthropic;
let gemini: ReplayProvider;
let client: Anthropic;

const weather = { name: "get_weather", description: "Weather by city", input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] } };
const paris = { id: "call_w1", name: "get_weather", arguments: '{"city":"Paris"}' };
const tokyo = { id: "call_w2", name: "get_weather", arguments: '{"city":"Tokyo"}' };
const thought = "The user greets me; a greeting back will do.";
const chatSignature = "sig-chat-0123";

/** The OpenAI-compatible fake's answer, by upstream model name. */
const replies: Record<string, (body: Json) => ChatReply> = {
  text: () => ({ content: "Hello from the chat server." }),
  tools: (body) => ((body.messages as Json[]).some((m) => m.role === "tool") ? { content: "Paris is sunny." } : { content: "Checking both.", calls: [paris, tokyo] }),
  thinking: () => ({ reasoning: thought, signature: chatSignature, content: "Hello." }),
  cut: () => ({ content: "Hello there", cut: true }),
  "error-chunk": () => ({ content: "Hello there", errorChunk: true }),
};

const everything = ["max_tokens", "temperature", "top_p", "top_k", "stop", "tools", "tool_choice", "parallel_tool_calls", "reasoning"];
const pricing = { prompt: "0.000001", completion: "0.000002" };
const model = (id: string, endpoints: Array<[provider: string, upstream: string]>) => ({
  id,
  name: id,
  context_length: 100000,
  input_modalities: ["text", "image", "file"],
  endpoints: endpoints.map(([provider, upstream]) => ({ provider, upstream_model: upstream, pricing, max_completion_tokens: 4096, supported_parameters: everything })),
});

beforeAll(async () => {
  chat = await startFakeChat((body) => (replies[String(body.model)] ?? replies.text!)(body));
  claude = await startFakeAnthropic();
  gemini = await startReplayProvider(join(import.meta.dirname, "fixtures/google"), (req) => ({ file: req.path.includes(":streamGenerateContent") ? "tools-stream.sse" : "generate.json" }));
  const catalog = {
    providers: [
      { slug: "open", name: "Open", adapter: "openai-compatible", base_url: chat.baseUrl, requires_api_key: false },
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
      { slug: "gemini", name: "Gemini", adapter: "google", base_url: gemini.baseUrl, api_key_env: "GEMINI_KEY" },
    ],
    models: [
      ...Object.keys(replies).map((name) => model(`vendor/${name}`, [["open", name]])),
      model("vendor/both", [["open", "text"], ["claude", "text"]]),
      model("google/text", [["gemini", "text"]]),
      model("google/tools", [["gemini", "tools"]]),
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), CLAUDE_KEY: "claude-secret", GEMINI_KEY: "gemini-secret" });
  const key = String((await gw.call("POST", "/keys", { body: { name: "translation" } })).body.key);
  client = new Anthropic({ apiKey: key, baseURL: `${gw.baseUrl}/api`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.stop();
  await chat?.stop();
  await claude?.stop();
  await gemini?.stop();
});

const lastChat = () => chat.requests.at(-1)!;
const user = (content: Anthropic.MessageParam["content"]): Anthropic.MessageParam[] => [{ role: "user", content }];
/** A streamed message's events as the SDK parsed them, and the message they made. */
async function streamed(params: Anthropic.MessageStreamParams) {
  const stream = client.messages.stream(params);
  const events: Anthropic.MessageStreamEvent[] = [];
  stream.on("streamEvent", (event) => events.push(event));
  const message = await stream.finalMessage();
  return { message, events, deltas: (type: string) => events.flatMap((e) => (e.type === "content_block_delta" && e.delta.type === type ? [e.delta] : [])) };
}

describe("Messages to an OpenAI-compatible endpoint", () => {
  it("sends the translation of the request and answers text, buffered and streamed", async () => {
    const params = { model: "vendor/text", max_tokens: 300, system: "Be brief.", stop_sequences: ["END"], temperature: 0.5, top_p: 0.9, top_k: 40, messages: user("Hi") };
    const message = await client.messages.create(params);
    expect(lastChat()).toEqual({
      model: "text",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
      max_tokens: 300,
      stop: ["END"],
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      stream: false,
    });
    expect(message).toMatchObject({ type: "message", role: "assistant", model: "vendor/text", content: [{ type: "text", text: "Hello from the chat server." }], stop_reason: "end_turn", stop_sequence: null });
    expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });

    const { message: streamedMessage, deltas } = await streamed({ ...params, system: [{ type: "text", text: "Be brief." }] });
    expect(lastChat()).toMatchObject({ messages: [{ role: "system", content: [{ type: "text", text: "Be brief." }] }, { role: "user", content: "Hi" }], stream: true, stream_options: { include_usage: true } });
    expect(deltas("text_delta").map((d) => (d as Anthropic.TextDelta).text)).toEqual(["Hello from the", " chat server."]);
    expect(streamedMessage.content).toEqual(message.content);
    expect(streamedMessage.usage).toMatchObject({ input_tokens: 12, output_tokens: 5 });
  });

  it("declares tools as functions with their input schema, and maps each tool choice", async () => {
    const ask = (tool_choice: Anthropic.ToolChoice | undefined) => client.messages.create({ model: "vendor/text", max_tokens: 100, tools: [weather], ...(tool_choice ? { tool_choice } : {}), messages: user("Weather?") });
    await ask({ type: "any" });
    expect(lastChat().tools).toEqual([{ type: "function", function: { name: "get_weather", description: "Weather by city", parameters: weather.input_schema } }]);
    expect(lastChat()).toMatchObject({ tool_choice: "required" });
    expect(lastChat()).not.toHaveProperty("parallel_tool_calls");
    const cases: Array<[Anthropic.ToolChoice, Json]> = [
      [{ type: "auto", disable_parallel_tool_use: true }, { tool_choice: "auto", parallel_tool_calls: false }],
      [{ type: "tool", name: "get_weather" }, { tool_choice: { type: "function", function: { name: "get_weather" } } }],
      [{ type: "none" }, { tool_choice: "none" }],
      [{ type: "any", disable_parallel_tool_use: true }, { tool_choice: "required", parallel_tool_calls: false }],
    ];
    for (const [choice, sent] of cases) {
      await ask(choice);
      expect({ tool_choice: lastChat().tool_choice, ...(lastChat().parallel_tool_calls !== undefined ? { parallel_tool_calls: lastChat().parallel_tool_calls } : {}) }).toEqual(sent);
    }
  });

  it("streams tool calls with input_json_delta, and carries the tool results back as tool messages", async () => {
    const question = user("Weather in Paris and Tokyo?");
    const first = await streamed({ model: "vendor/tools", max_tokens: 500, tools: [weather], messages: question });
    expect(first.message.stop_reason).toBe("tool_use");
    expect(first.message.content).toEqual([
      { type: "text", text: "Checking both." },
      { type: "tool_use", id: "call_w1", name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: "call_w2", name: "get_weather", input: { city: "Tokyo" } },
    ]);
    const pieces = first.deltas("input_json_delta").map((d) => (d as Anthropic.InputJSONDelta).partial_json);
    expect(pieces).toEqual(['{"city":', '"Paris"}', '{"city":', '"Tokyo"}']);

    const buffered = await client.messages.create({ model: "vendor/tools", max_tokens: 500, tools: [weather], messages: question });
    expect(buffered.content).toEqual(first.message.content);

    const results: Anthropic.ToolResultBlockParam[] = [
      { type: "tool_result", tool_use_id: "call_w1", content: "sunny, 24°C" },
      { type: "tool_result", tool_use_id: "call_w2", content: [{ type: "text", text: "station offline" }, { type: "text", text: "since noon" }], is_error: true },
    ];
    const answer = await client.messages.create({
      model: "vendor/tools",
      max_tokens: 500,
      tools: [weather],
      messages: [...question, { role: "assistant", content: first.message.content }, { role: "user", content: [...results, { type: "text", text: "And?" }] }],
    });
    expect(answer.content).toEqual([{ type: "text", text: "Paris is sunny." }]);
    expect((lastChat().messages as Json[]).slice(1)).toEqual([
      {
        role: "assistant",
        content: [{ type: "text", text: "Checking both." }],
        tool_calls: [
          { id: "call_w1", type: "function", function: { name: "get_weather", arguments: paris.arguments } },
          { id: "call_w2", type: "function", function: { name: "get_weather", arguments: tokyo.arguments } },
        ],
      },
      { role: "tool", tool_call_id: "call_w1", content: "sunny, 24°C" },
      { role: "tool", tool_call_id: "call_w2", content: "Error: station offline\nsince noon" },
      { role: "user", content: [{ type: "text", text: "And?" }] },
    ]);
  });

  it("asks for reasoning with the thinking budget, and answers reasoning as signed thinking blocks", async () => {
    const params = { model: "vendor/thinking", max_tokens: 4000, thinking: { type: "enabled" as const, budget_tokens: 2048 }, messages: user("Hi") };
    const buffered = await client.messages.create(params);
    expect(lastChat()).toMatchObject({ reasoning: { max_tokens: 2048 } });
    const blocks = [
      { type: "thinking", thinking: thought, signature: chatSignature },
      { type: "text", text: "Hello." },
    ];
    expect(buffered.content).toEqual(blocks);

    const { message, deltas } = await streamed(params);
    expect(deltas("thinking_delta").map((d) => (d as Anthropic.ThinkingDelta).thinking).join("")).toBe(thought);
    expect(deltas("thinking_delta")).toHaveLength(2);
    expect(deltas("signature_delta")).toEqual([{ type: "signature_delta", signature: chatSignature }]);
    expect(message.content).toEqual(blocks);

    // Sent back, the thinking signed in Anthropic's format goes to Anthropic alone: the chat endpoint gets the words.
    await client.messages.create({ ...params, messages: [...params.messages, { role: "assistant", content: message.content }, { role: "user", content: "Again" }] });
    expect((lastChat().messages as Json[])[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "Hello." }] });
  });

  it("sends images as image_url parts and a PDF as a file part", async () => {
    await client.messages.create({
      model: "vendor/text",
      max_tokens: 100,
      messages: user([
        { type: "text", text: "Compare these." },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
        { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQK" }, title: "report.pdf" },
        { type: "document", source: { type: "url", url: "https://example.com/paper.pdf" } },
      ]),
    });
    expect((lastChat().messages as Json[])[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "Compare these." },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
        { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
        { type: "file", file: { filename: "report.pdf", file_data: "data:application/pdf;base64,JVBERi0xLjQK" } },
        { type: "file", file: { filename: "document.pdf", file_data: "https://example.com/paper.pdf" } },
      ],
    });
  });

  it("ends the SDK's stream with an error when the upstream stream fails mid-way", async () => {
    const stream = client.messages.stream({ model: "vendor/cut", max_tokens: 100, messages: user("Hi") });
    const texts: string[] = [];
    stream.on("text", (text) => texts.push(text));
    await expect(stream.finalMessage()).rejects.toMatchObject({ error: { type: "error", error: { type: "api_error", message: "Provider returned error mid-stream" } } });
    expect(texts).toEqual(["Hello "]);
  });

  it("ends the SDK's stream with an error when the upstream ends its stream with an error of its own", async () => {
    const stream = client.messages.stream({ model: "vendor/error-chunk", max_tokens: 100, messages: user("Hi") });
    await expect(stream.finalMessage()).rejects.toMatchObject({ error: { type: "error", error: { type: "api_error", message: "Provider returned error mid-stream" } } });
  });

  it("ends a chat stream the same way: one in-band error frame, no [DONE], and the generation recorded as failed", async () => {
    const res = await gw.call("POST", "/keys", { body: { name: "chat-error-chunk" } });
    const key = String(res.body.key);
    const answer = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "vendor/error-chunk", messages: [{ role: "user", content: "Hi" }], stream: true }),
    });
    const frames = (await answer.text()).split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6));
    expect(frames.at(-1)).not.toBe("[DONE]");
    expect(JSON.parse(frames.at(-1)!)).toMatchObject({ error: { code: 502, message: "Provider returned error mid-stream" }, choices: [{ finish_reason: "error" }] });
    const id = answer.headers.get("x-generation-id")!;
    await eventually(async () => (await gw.call("GET", `/generation?id=${id}`, { key })).status === 200, 5000);
    expect((await gw.call("GET", `/generation?id=${id}`, { key })).body.data).toMatchObject({ finish_reason: "error", streamed: true });
  });
});

describe("what only Anthropic's API carries", () => {
  const refused = (field: string, what: string) => ({
    status: 400,
    error: { type: "error", error: { type: "invalid_request_error", message: expect.stringMatching(new RegExp(`${field.replace(/[[\].]/g, "\\$&")}: ${what}`)) } },
  });
  const bash = { type: "bash_20250124", name: "bash" } as Anthropic.ToolBash20250124;
  const fileDocument = { type: "document", source: { type: "file", file_id: "file_012" } } as unknown as Anthropic.DocumentBlockParam;
  const longNamed = { ...weather, name: `mcp__${"reference_library__".repeat(4)}lookup` };

  it("refuses it for a model without an Anthropic endpoint, naming the field", async () => {
    const before = chat.requests.length;
    await expect(client.messages.create({ model: "vendor/text", max_tokens: 100, tools: [weather, bash], messages: user("ls") })).rejects.toMatchObject(refused("tools[1]", "tools of type bash_20250124"));
    const fileImage = { type: "image", source: { type: "file", file_id: "file_011" } } as unknown as Anthropic.ImageBlockParam;
    await expect(client.messages.create({ model: "vendor/text", max_tokens: 100, messages: user([{ type: "text", text: "See" }, fileImage]) })).rejects.toMatchObject(
      refused("messages[0].content[1].source", "file sources"),
    );
    const withEdits = { model: "vendor/text", max_tokens: 100, context_management: { edits: [] }, messages: user("Hi") } as unknown as Anthropic.MessageCreateParamsNonStreaming;
    await expect(client.messages.create(withEdits)).rejects.toMatchObject(refused("context_management", "Anthropic's own setting"));
    await expect(client.messages.create({ model: "vendor/text", max_tokens: 100, messages: user([fileDocument]) })).rejects.toMatchObject(refused("messages[0].content[0].source", "file sources"));
    await expect(client.messages.create({ model: "vendor/text", max_tokens: 100, tools: [longNamed], messages: user("Look it up") })).rejects.toMatchObject(
      refused("tools[0].name", "tool names longer than 64 characters"),
    );
    expect(chat.requests.length).toBe(before);
  });

  it("routes it to the Anthropic endpoint of a model that has one, with the body as sent", async () => {
    const order = { provider: { order: ["open", "claude"] } };
    const plain = await client.messages.create({ model: "vendor/both", max_tokens: 100, messages: user("Hi"), ...order } as Anthropic.MessageCreateParamsNonStreaming);
    expect(plain.content).toEqual([{ type: "text", text: "Hello from the chat server." }]);

    const before = { chat: chat.requests.length, claude: claude.requests.length };
    const message = await client.messages.create({ model: "vendor/both", max_tokens: 100, tools: [weather, bash], messages: user("ls"), ...order } as Anthropic.MessageCreateParamsNonStreaming);
    expect(message.content).toEqual([{ type: "text", text: greeting }]);
    expect(chat.requests.length).toBe(before.chat);
    expect(claude.requests.length).toBe(before.claude + 1);
    expect(claude.requests.at(-1)!.raw).toContain(JSON.stringify([weather, bash]));

    // A turn of nothing but a file source, and a tool name of more than 64 characters (Anthropic takes 128).
    await client.messages.create({ model: "vendor/both", max_tokens: 100, messages: user([fileDocument]), ...order } as Anthropic.MessageCreateParamsNonStreaming);
    expect(claude.requests.at(-1)!.body.messages).toEqual(user([fileDocument]));
    const tool_choice = { type: "tool", name: longNamed.name };
    await client.messages.create({ model: "vendor/both", max_tokens: 100, tools: [longNamed], tool_choice, messages: user("Look it up"), ...order } as Anthropic.MessageCreateParamsNonStreaming);
    expect(claude.requests.at(-1)!.body).toMatchObject({ tools: [longNamed], tool_choice });
    expect(chat.requests.length).toBe(before.chat);
  });
});

describe("Messages to a Gemini endpoint", () => {
  it("sends the translation and answers text, then streams parallel tool calls", async () => {
    const text = await client.messages.create({ model: "google/text", max_tokens: 200, system: "Be brief.", messages: user("Hi") });
    const sent = gemini.requests.at(-1)!;
    expect(sent.path).toBe("/v1/models/text:generateContent");
    expect(sent.body).toMatchObject({ contents: [{ role: "user", parts: [{ text: "Hi" }] }], systemInstruction: { parts: [{ text: "Be brief." }] }, generationConfig: { maxOutputTokens: 200 } });
    expect(text.content.at(-1)).toEqual({ type: "text", text: "Hello! How can I help you today?" });
    expect(text.content[0]).toMatchObject({ type: "thinking", thinking: expect.stringContaining("Greeting the user") });

    const tools = await streamed({ model: "google/tools", max_tokens: 200, tools: [weather], tool_choice: { type: "any" }, messages: user("Weather in Paris and Tokyo?") });
    expect(gemini.requests.at(-1)!.body).toMatchObject({
      tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather by city" }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY" } },
    });
    expect(tools.message.stop_reason).toBe("tool_use");
    const [paris, tokyo] = tools.message.content.filter((b) => b.type === "tool_use");
    expect(tools.message.content).toEqual([
      { type: "text", text: "Checking both cities." },
      // Gemini's thought signature for the Paris call, marked as Gemini's so that it goes back to Gemini only.
      { type: "redacted_thinking", data: `switchyard:google-gemini-v1:${paris!.id}:CiIBVKhc7oDTmE0jbiHhOj0RrhbuVcLIR6f2I3CIJ9bgkjHsQm4a` },
      { type: "tool_use", id: expect.any(String), name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: expect.any(String), name: "get_weather", input: { city: "Tokyo" } },
    ]);
    expect(tools.deltas("input_json_delta").map((d) => JSON.parse((d as Anthropic.InputJSONDelta).partial_json) as unknown)).toEqual([{ city: "Paris" }, { city: "Tokyo" }]);

    // Sent back with the results, the signature reaches Gemini on the call it belongs to, as Gemini requires.
    const results: Anthropic.ToolResultBlockParam[] = [paris!, tokyo!].map((call) => ({ type: "tool_result", tool_use_id: call.id, content: "sunny" }));
    await client.messages.create({ model: "google/text", max_tokens: 200, tools: [weather], messages: [...user("Weather in Paris and Tokyo?"), { role: "assistant", content: tools.message.content }, ...user(results)] });
    const contents = gemini.requests.at(-1)!.body.contents as Array<{ role: string; parts: unknown[] }>;
    expect(contents[1]!.parts).toContainEqual({ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "CiIBVKhc7oDTmE0jbiHhOj0RrhbuVcLIR6f2I3CIJ9bgkjHsQm4a" });
  });
});
