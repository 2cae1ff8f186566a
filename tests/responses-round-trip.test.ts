import type OpenAI from "openai";
import type { ResponseInputItem, ResponseOutputItem } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeResponses } from "./support/fake-responses.js";
import { collect } from "./support/responses-events.js";
import { startResponsesGateway, type ResponsesFixture } from "./support/responses-fixture.js";

/**
 * Reasoning sent back the way Codex sends it: a reasoning item keeps only `type`, `summary`, `content` and
 * `encrypted_content`, so whatever a provider needs to continue must travel in `encrypted_content`, and
 * each provider gets only the reasoning of its own kind.
 */
let fx: ResponsesFixture;
let responses: FakeResponses;
let openai: OpenAI;

const replies = {
  claude: { buffered: { text: { file: "message.json" }, tools: { file: "tool-use.json" } }, streamed: { text: { file: "stream.sse" }, tools: { file: "tool-stream.sse" } } },
  gemini: { buffered: { text: { file: "generate.json" }, tools: { file: "tools.json" } }, streamed: { text: { file: "stream.sse" }, tools: { file: "tools-stream.sse" } } },
};

beforeAll(async () => {
  fx = await startResponsesGateway(
    "round-trip",
    [
      ["openai/reasoning", "openai", "gpt-reasoning"],
      ["anthropic/text", "claude", "text"],
      ["anthropic/tools", "claude", "tools"],
      ["google/text", "gemini", "text"],
      ["google/tools", "gemini", "tools"],
    ],
    replies,
  );
  ({ responses, openai } = fx);
}, 60_000);
afterAll(() => fx?.stop());

const weather = { type: "function" as const, name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false };

/** An answer's items as Codex sends them back: no ids, no `format`, no `signature`, no status. */
function asCodex(items: ResponseOutputItem[]): ResponseInputItem[] {
  return items.map((item) => {
    if (item.type === "reasoning") {
      const content = item.content?.length ? { content: item.content } : {};
      return { type: "reasoning", summary: item.summary, ...content, encrypted_content: item.encrypted_content ?? null } as unknown as ResponseInputItem;
    }
    if (item.type === "function_call") return { type: "function_call", name: item.name, arguments: item.arguments, call_id: item.call_id } as ResponseInputItem;
    if (item.type === "message") return { type: "message", role: "assistant", content: item.content } as ResponseInputItem;
    throw new Error(`unexpected item ${item.type}`);
  });
}

/** The items of a streamed answer as Codex keeps them: each `response.output_item.done`. */
async function streamedItems(params: Parameters<OpenAI["responses"]["stream"]>[0]): Promise<ResponseOutputItem[]> {
  const events = await collect(openai.responses.stream(params));
  return events.flatMap((e) => (e.type === "response.output_item.done" ? [e.item] : []));
}

/** Sends a request as Codex does, streamed, or buffered; what the provider received is what is checked. */
async function send(params: Omit<Parameters<OpenAI["responses"]["create"]>[0], "stream">, streamed: boolean): Promise<void> {
  if (streamed) await collect(await openai.responses.create({ ...params, stream: true }));
  else await openai.responses.create({ ...params, stream: false });
}

/** Results for each function call of an answer. */
const resultsOf = (items: ResponseOutputItem[]): ResponseInputItem[] =>
  items.flatMap((item): ResponseInputItem[] => (item.type === "function_call" ? [{ type: "function_call_output", call_id: item.call_id, output: "sunny" }] : []));

const reasoningOf = (items: ResponseOutputItem[]) => items.filter((item) => item.type === "reasoning");
const lastOpenAi = () => responses.requests.at(-1)!.body;
const claudeAssistant = () => (fx.claude.requests.at(-1)!.body.messages as Array<{ role: string; content: Array<{ type: string }> }>).find((m) => m.role === "assistant")!;
const geminiModelTurn = () => (fx.gemini.requests.at(-1)!.body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>).find((c) => c.role === "model")!;

const signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";
const thoughtSignature = "CiIBVKhc7oDTmE0jbiHhOj0RrhbuVcLIR6f2I3CIJ9bgkjHsQm4a";

describe("reasoning sent back as Codex sends it", () => {
  it("OpenAI: the encrypted content, unmarked, goes back to OpenAI, buffered and streamed", async () => {
    const params = { model: "openai/reasoning", input: "Say hello", reasoning: { effort: "high" as const }, include: ["reasoning.encrypted_content" as const] };
    const buffered = await openai.responses.create(params);
    const n = responses.requests.length;
    expect(reasoningOf(buffered.output)[0]).toMatchObject({ encrypted_content: `gAAAAB-fake-encrypted-${n}` });
    const streamed = await streamedItems(params);
    for (const [items, turn, stream] of [[buffered.output, n, false], [streamed, n + 1, true]] as const) {
      await send({ model: "openai/reasoning", input: [{ role: "user", content: "Say hello" }, ...asCodex(items), { role: "user", content: "Again" }] }, stream);
      const summary = [
        { type: "summary_text", text: "The caller wants a greeting." },
        { type: "summary_text", text: "A short answer will do." },
      ];
      expect((lastOpenAi().input as unknown[])[1]).toEqual({ type: "reasoning", summary, encrypted_content: `gAAAAB-fake-encrypted-${turn}` });
    }
  });

  it("Anthropic: the thinking block's signature rides in encrypted_content and comes back as thinking", async () => {
    const params = { model: "anthropic/tools", input: "Weather in Paris?", tools: [weather], max_output_tokens: 4000, reasoning: { effort: "low" as const } };
    const buffered = (await openai.responses.create(params)).output;
    const streamed = await streamedItems(params);
    for (const [items, thought, stream] of [
      [buffered, "The user wants the weather in Paris; I should call the tool.", false],
      [streamed, "I need the weather tool.", true],
    ] as const) {
      expect(reasoningOf(items)[0]!.encrypted_content).toBe(`switchyard:signature:anthropic-claude-v1::${signature}`);
      await send({ model: "anthropic/text", tools: [weather], input: [{ role: "user", content: "Weather in Paris?" }, ...asCodex(items), ...resultsOf(items)] }, stream);
      expect(claudeAssistant().content[0]).toEqual({ type: "thinking", thinking: thought, signature });
    }
    // Summarised thinking comes back whole from its summary.
    const summarized = await streamedItems({ ...params, reasoning: { effort: "low", summary: "auto" } });
    await openai.responses.create({ model: "anthropic/text", tools: [weather], input: [{ role: "user", content: "Weather?" }, ...asCodex(summarized), ...resultsOf(summarized)] });
    expect(claudeAssistant().content[0]).toEqual({ type: "thinking", thinking: "I need the weather tool.", signature });
  });

  it("Gemini: the thought signature and its call ride in encrypted_content and reach the call again", async () => {
    const params = { model: "google/tools", input: "Weather in Paris and Tokyo?", tools: [weather] };
    const buffered = (await openai.responses.create(params)).output;
    const streamed = await streamedItems(params);
    for (const [items, stream] of [
      [buffered, false],
      [streamed, true],
    ] as const) {
      const first = items.find((item) => item.type === "function_call")!;
      if (first.type !== "function_call") throw new Error("expected a call");
      expect(reasoningOf(items)[0]!.encrypted_content).toBe(`switchyard:encrypted:google-gemini-v1:${first.call_id}:${thoughtSignature}`);
      await send({ model: "google/text", tools: [weather], input: [{ role: "user", content: "Weather?" }, ...asCodex(items), ...resultsOf(items)] }, stream);
      const calls = geminiModelTurn().parts.filter((p) => "functionCall" in p);
      expect(calls[0]).toEqual({ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature });
      expect(calls[1]).not.toHaveProperty("thoughtSignature");
    }
  });
});

describe("each provider gets only its own kind of reasoning", () => {
  it("OpenAI's encrypted reasoning never reaches Anthropic, in Codex's shape or with its format", async () => {
    const first = await openai.responses.create({ model: "openai/reasoning", input: "Say hello", reasoning: { effort: "high" } });
    for (const items of [asCodex(first.output), first.output as ResponseInputItem[]]) {
      await openai.responses.create({ model: "anthropic/text", input: [{ role: "user", content: "Say hello" }, ...items, { role: "user", content: "Again" }] });
      expect(claudeAssistant().content.map((b) => b.type)).toEqual(["text"]);
    }
  });

  it("Anthropic's and Gemini's reasoning never reach OpenAI, and Gemini's never reaches Anthropic", async () => {
    const thinking = (await openai.responses.create({ model: "anthropic/tools", input: "Weather?", tools: [weather], reasoning: { effort: "low" } })).output;
    const signed = (await openai.responses.create({ model: "google/tools", input: "Weather?", tools: [weather] })).output;
    for (const items of [thinking, signed]) {
      await openai.responses.create({ model: "openai/reasoning", tools: [weather], input: [{ role: "user", content: "Weather?" }, ...asCodex(items), ...resultsOf(items)] });
      expect((lastOpenAi().input as Array<{ type: string }>).map((i) => i.type)).not.toContain("reasoning");
    }
    await openai.responses.create({ model: "anthropic/text", tools: [weather], input: [{ role: "user", content: "Weather?" }, ...asCodex(signed), ...resultsOf(signed)] });
    expect(claudeAssistant().content.map((b) => b.type)).not.toContain("redacted_thinking");
  });

  it("still takes the format, id and signature fields older clients send back", async () => {
    const old = [
      { type: "reasoning", id: "rs_old", summary: [{ type: "summary_text", text: "Thinking." }], signature, format: "anthropic-claude-v1" },
      { type: "function_call", call_id: "toolu_old", name: "get_weather", arguments: "{}" },
      { type: "function_call_output", call_id: "toolu_old", output: "sunny" },
    ] as unknown as ResponseInputItem[];
    await openai.responses.create({ model: "anthropic/text", tools: [weather], input: [{ role: "user", content: "Weather?" }, ...old] });
    expect(claudeAssistant().content[0]).toEqual({ type: "thinking", thinking: "Thinking.", signature });
    const gem = [
      { type: "reasoning", id: "call_old", summary: [], encrypted_content: thoughtSignature, format: "google-gemini-v1" },
      { type: "function_call", call_id: "call_old", name: "get_weather", arguments: "{}" },
      { type: "function_call_output", call_id: "call_old", output: "sunny" },
    ] as unknown as ResponseInputItem[];
    await openai.responses.create({ model: "google/text", tools: [weather], input: [{ role: "user", content: "Weather?" }, ...gem] });
    expect(geminiModelTurn().parts[0]).toEqual({ functionCall: { name: "get_weather", args: {} }, thoughtSignature });
  });
});
