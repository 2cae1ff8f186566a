import { OpenRouter } from "@openrouter/sdk";
import { BadRequestResponseError } from "@openrouter/sdk/models/errors";
import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import type { TestGateway } from "./support/gateway.js";
import type { Answer } from "./support/replay-provider.js";
import { startResponsesGateway, type ResponsesFixture } from "./support/responses-fixture.js";
import { collect, completedOf, deltas, increasing, parseEvents, shape } from "./support/responses-events.js";

let fx: ResponsesFixture;
let gw: TestGateway;
let key: string;
let openai: OpenAI;
let client: OpenRouter;

const anthropicAnswers: Record<string, Answer> = { tools: { file: "tool-use.json" } };
const anthropicStreams: Record<string, Answer> = { tools: { file: "tool-stream.sse" } };
const googleAnswers: Record<string, Answer> = { long: { file: "max-tokens.json" }, tools: { file: "tools.json" } };
const googleStreams: Record<string, Answer> = { tools: { file: "tools-stream.sse" } };

beforeAll(async () => {
  fx = await startResponsesGateway(
    "outcomes",
    [
      ["compat/bad", "compat", "bad-request"],
      ["compat/cut", "compat", "cut"],
      ["openai/reasoning", "openai", "gpt-reasoning"],
      ["openai/refusal", "openai", "gpt-refusal"],
      ["openai/incomplete", "openai", "gpt-incomplete"],
      ["openai/fail", "openai", "gpt-fail"],
      ["anthropic/tools", "claude", "tools"],
      ["google/long", "gemini", "long"],
      ["google/tools", "gemini", "tools"],
    ],
    { claude: { buffered: anthropicAnswers, streamed: anthropicStreams }, gemini: { buffered: googleAnswers, streamed: googleStreams } },
  );
  ({ gw, key, openai } = fx);
  client = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
}, 60_000);
afterAll(() => fx?.stop());

/** A streamed request as raw events, with its generation id header. */
async function streamRaw(body: Record<string, unknown>) {
  const res = await fetch(`${gw.apiUrl}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  return { status: res.status, id: res.headers.get("x-generation-id"), events: parseEvents(await res.text()) };
}

describe("how an answer ends", () => {
  it("shows a model's refusal as a refusal part, buffered and streamed", async () => {
    const buffered = await openai.responses.create({ model: "openai/refusal", input: "Something forbidden" });
    expect(buffered.output).toEqual([{ type: "message", id: expect.stringMatching(/^msg_/), role: "assistant", status: "completed", content: [{ type: "refusal", refusal: "I can't help with that." }] }]);
    expect(buffered.output_text).toBe("");

    const { events } = await streamRaw({ model: "openai/refusal", input: "Something forbidden" });
    expect(increasing(events)).toBe(true);
    expect(shape(events)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.refusal.delta",
      "response.refusal.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(deltas(events, "response.refusal.delta")).toBe("I can't help with that.");
    expect(completedOf(events).output).toEqual([{ ...buffered.output[0], id: expect.stringMatching(/^msg_/) }]);
    const sdk = await client.responses.send({ responsesRequest: { model: "openai/refusal", input: "Something forbidden" } });
    if (Symbol.asyncIterator in sdk) throw new Error("expected a buffered response");
    expect(sdk.output[0]).toMatchObject({ type: "message", content: [{ type: "refusal", refusal: "I can't help with that." }] });
  });

  it("is incomplete at the output limit: buffered, and streamed as response.incomplete", async () => {
    const gemini = await openai.responses.create({ model: "google/long", input: "A story", max_output_tokens: 8 });
    expect(gemini).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, max_output_tokens: 8 });
    expect(gemini.output.at(-1)).toMatchObject({ type: "message", status: "incomplete" });

    const buffered = await openai.responses.create({ model: "openai/incomplete", input: "A story", max_output_tokens: 16 });
    expect(buffered).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    const { events } = await streamRaw({ model: "openai/incomplete", input: "A story", max_output_tokens: 16 });
    const last = events.at(-1)!;
    expect(last.type).toBe("response.incomplete");
    if (last.type !== "response.incomplete") return;
    expect(last.response).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output_text: buffered.output_text });
    const statuses = (output: Array<{ type: string; status?: string | null }>) => output.map((item) => [item.type, item.status]);
    expect(statuses(last.response.output)).toEqual(statuses(buffered.output));
  });

  it("fails in-band after the first words: an error event, then response.failed with what was said", async () => {
    for (const [id, said] of [
      ["openai/fail", "Hello from the"],
      ["compat/cut", "Hello from compat"],
    ] as const) {
      const { status, id: generationId, events } = await streamRaw({ model: id, input: "Say hello" });
      expect(status).toBe(200);
      expect(increasing(events)).toBe(true);
      const [error, failed] = events.slice(-2);
      expect(error).toMatchObject({ type: "error", code: "server_error", message: "Provider returned error mid-stream" });
      expect(failed).toMatchObject({ type: "response.failed", response: { id: generationId, status: "failed", error: { code: "server_error", message: "Provider returned error mid-stream" } } });
      if (failed?.type !== "response.failed") return;
      expect(failed.response.output).toEqual([expect.objectContaining({ type: "message", status: "incomplete", content: [expect.objectContaining({ text: expect.stringContaining(said) })] })]);
      await eventually(async () => (await gw.call("GET", `/generation?id=${generationId}`, { key })).status === 200, 5000);
      const stored = (await gw.call("GET", `/generation?id=${generationId}`, { key })).body.data as Record<string, unknown>;
      expect(stored).toMatchObject({ streamed: true, finish_reason: "error" });
    }
    // The openai client stops at the error event: the stream has no final response.
    const failing = openai.responses.stream({ model: "openai/fail", input: "Say hello" });
    expect((await collect(failing)).map((e) => e.type)).toContain("error");
    await expect(failing.finalResponse()).rejects.toThrow();
  });

  it("is a plain HTTP error when no endpoint accepts a streamed request, which the SDK raises typed", async () => {
    const { status } = await streamRaw({ model: "compat/bad", input: "Hi" });
    expect(status).toBe(400);
    const stream = client.responses.send({ responsesRequest: { model: "compat/bad", input: "Hi", stream: true } });
    await expect(stream).rejects.toBeInstanceOf(BadRequestResponseError);
    await expect(stream).rejects.toMatchObject({ error: { message: "Provider rejected the request" } });
  });
});

describe("@openrouter/sdk reads reasoning and calls of every adapter", () => {
  const weather = { type: "function" as const, name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } } };
  const kinds = (output: Array<{ type: string }>) => [...new Set(output.map((item) => item.type))].sort();
  // The streamed Gemini recording says a few words before its calls; the buffered one does not.
  const cases: Array<[string, string[], string[]]> = [
    ["openai/reasoning", ["function_call", "reasoning"], ["function_call", "reasoning"]],
    ["anthropic/tools", ["function_call", "message", "reasoning"], ["function_call", "message", "reasoning"]],
    ["google/tools", ["function_call", "reasoning"], ["function_call", "message", "reasoning"]],
  ];
  for (const [id, whole, streamed] of cases) {
    it(`${id}: buffered and streamed, through its response validation`, async () => {
      const request = { model: id, input: "Weather in Paris?", tools: [weather], reasoning: { effort: "low" as const, summary: "auto" as const } };
      const buffered = await client.responses.send({ responsesRequest: request });
      if (Symbol.asyncIterator in buffered) throw new Error("expected a buffered response");
      expect(buffered.status).toBe("completed");
      expect(kinds(buffered.output)).toEqual(whole);
      const stream = await client.responses.send({ responsesRequest: { ...request, stream: true } });
      if (!(Symbol.asyncIterator in stream)) throw new Error("expected a stream");
      const seen: string[] = [];
      let final: unknown;
      for await (const event of stream) {
        seen.push(event.type);
        if (event.type === "response.completed" && "response" in event) final = event.response;
      }
      expect(seen.at(-1)).toBe("response.completed");
      expect(kinds((final as { output: Array<{ type: string }> }).output)).toEqual(streamed);
    });
  }
});
