import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeResponses, type FakeResponses } from "../../../../tests/support/fake-responses.js";
import type { PartBatch, StreamPart } from "../generation/parts.js";
import { mergeDetails, type Detail } from "../tools/reasoning.js";
import { openAiResponses } from "./openai-responses.js";
import { responsesBody, responsesCannotCarry } from "./openai-responses-request.js";
import { UpstreamError, type UpstreamTarget } from "./types.js";

type Json = Record<string, unknown>;

const weatherTool = { type: "function", function: { name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" } } } } };

describe("responsesBody", () => {
  it("turns every message kind into input items, in order", () => {
    const out = responsesBody(
      {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "developer", content: [{ type: "text", text: "Answer in French." }] },
          {
            role: "user",
            content: [
              { type: "text", text: "What is on these?", prompt_cache_breakpoint: { mode: "explicit" } },
              { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
              { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } },
              { type: "file", file: { file_data: "https://example.com/b.pdf" } },
              { type: "file", file: { file_id: "file-123" } },
              { type: "file", file: { file_id: "file-img" }, image_detail: "high" },
            ],
          },
          { role: "assistant", content: "Let me look.", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
          { role: "tool", tool_call_id: "call_1", content: "sunny" },
          { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "rain" }, { type: "text", text: "y" }] },
          { role: "system", content: "Stay kind." },
        ],
      },
      "gpt-5",
      false,
    );
    expect(out.model).toBe("gpt-5");
    expect(out.store).toBe(false);
    expect(out.stream).toBe(false);
    expect(out.instructions).toBeUndefined();
    expect(out.input).toEqual([
      { type: "message", role: "system", content: [{ type: "input_text", text: "Be brief." }] },
      { type: "message", role: "developer", content: [{ type: "input_text", text: "Answer in French." }] },
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "What is on these?", prompt_cache_breakpoint: { mode: "explicit" } },
          { type: "input_image", image_url: "https://example.com/cat.png", detail: "low" },
          { type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
          { type: "input_file", file_url: "https://example.com/b.pdf" },
          { type: "input_file", file_id: "file-123" },
          { type: "input_image", file_id: "file-img", detail: "high" },
        ],
      },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me look." }] },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call_output", call_id: "call_1", output: "sunny" },
      { type: "function_call_output", call_id: "call_2", output: "rainy" },
      { type: "message", role: "system", content: [{ type: "input_text", text: "Stay kind." }] },
    ]);
  });

  it("sends an assistant turn's encrypted reasoning back before the turn's items", () => {
    const details = [
      { type: "reasoning.summary", summary: "First thought.", id: "rs_1", format: "openai-responses-v1", index: 0 },
      { type: "reasoning.summary", summary: "Second thought.", id: "rs_1", format: "openai-responses-v1", index: 1 },
      { type: "reasoning.encrypted", data: "gAAAA-1", id: "rs_1", format: "openai-responses-v1", index: 2 },
      { type: "reasoning.summary", summary: "Not encrypted, not resolvable.", id: "rs_2", format: "openai-responses-v1", index: 3 },
      { type: "reasoning.text", text: "Another provider's thinking.", signature: "sig", format: "anthropic-claude-v1", index: 4 },
    ];
    const out = responsesBody(
      {
        messages: [
          { role: "user", content: "Weather?" },
          { role: "assistant", content: null, reasoning_details: details, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "call_1", content: "sunny" },
        ],
      },
      "o4-mini",
      true,
    );
    expect((out.input as Json[]).slice(1)).toEqual([
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "First thought." }, { type: "summary_text", text: "Second thought." }], encrypted_content: "gAAAA-1" },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "sunny" },
    ]);
    // Reasoning sent back means a reasoning model: its next reasoning must come back encrypted too.
    expect(out.include).toEqual(["reasoning.encrypted_content"]);
    expect(out.stream).toBe(true);
  });

  it("flattens tools, says strict only when the tool does, and maps tool_choice", () => {
    const strict = (name: string, value: boolean) => ({ ...weatherTool, function: { name, parameters: { type: "object" }, strict: value } });
    const base = { messages: [{ role: "user", content: "Hi" }], tools: [weatherTool, strict("strict_one", true), strict("loose_one", false)] };
    const out = responsesBody({ ...base, tool_choice: { type: "function", function: { name: "get_weather" } }, parallel_tool_calls: false }, "gpt-5", false);
    expect(out.tools).toEqual([
      { type: "function", name: "get_weather", description: "Weather of a city", parameters: weatherTool.function.parameters },
      { type: "function", name: "strict_one", parameters: { type: "object" }, strict: true },
      { type: "function", name: "loose_one", parameters: { type: "object" }, strict: false },
    ]);
    expect(out.tool_choice).toEqual({ type: "function", name: "get_weather" });
    expect(out.parallel_tool_calls).toBe(false);
    expect(responsesBody({ ...base, tool_choice: "required" }, "gpt-5", false).tool_choice).toBe("required");
    const allowed = { type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "get_weather" } }] } };
    expect(responsesBody({ ...base, tool_choice: allowed }, "gpt-5", false).tool_choice).toEqual({ type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "get_weather" }] });
    expect(responsesBody({ messages: base.messages, tool_choice: "auto" }, "gpt-5", false)).not.toHaveProperty("tool_choice");
  });

  it("moves response_format into text.format, a JSON schema flattened", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };
    const out = responsesBody(
      { messages: [{ role: "user", content: "Hi" }], response_format: { type: "json_schema", json_schema: { name: "reply", description: "The reply", schema, strict: true } }, verbosity: "low" },
      "gpt-5",
      false,
    );
    expect(out.text).toEqual({ format: { type: "json_schema", name: "reply", description: "The reply", schema, strict: true }, verbosity: "low" });
    expect(responsesBody({ messages: [{ role: "user", content: "Hi" }], response_format: { type: "json_object" } }, "gpt-5", false).text).toEqual({ format: { type: "json_object" } });
  });

  it("binds JSON mode's own schema (json_object with schema) as a JSON schema that is not strict", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } } };
    const out = responsesBody({ messages: [{ role: "user", content: "Hi" }], response_format: { type: "json_object", schema } }, "gpt-5", false);
    expect(out.text).toEqual({ format: { type: "json_schema", name: "response", schema, strict: false } });
  });

  it("maps reasoning effort and summary, and asks for the encrypted reasoning", () => {
    const messages = [{ role: "user", content: "Think." }];
    const effort = responsesBody({ messages, reasoning_effort: "high", reasoning: { effort: "high" } }, "o3", false);
    expect(effort.reasoning).toEqual({ effort: "high", summary: "auto" });
    expect(effort.include).toEqual(["reasoning.encrypted_content"]);
    expect(responsesBody({ messages, reasoning: { effort: "low", summary: "detailed" } }, "o3", false).reasoning).toEqual({ effort: "low", summary: "detailed" });
    expect(responsesBody({ messages, reasoning: { effort: "medium", exclude: true } }, "o3", false).reasoning).toEqual({ effort: "medium" });
    expect(responsesBody({ messages, reasoning: { enabled: true } }, "o3", false).reasoning).toEqual({ summary: "auto" });
    const none = responsesBody({ messages, reasoning_effort: "none" }, "gpt-5.1", false);
    expect(none.reasoning).toEqual({ effort: "none" });
    expect(none).not.toHaveProperty("include");
    const plain = responsesBody({ messages }, "gpt-4.1", false);
    expect(plain).not.toHaveProperty("reasoning");
    expect(plain).not.toHaveProperty("include");
    const included = responsesBody({ messages, include: ["reasoning.encrypted_content"] }, "gpt-5", false);
    expect([included.reasoning, included.include]).toEqual([undefined, ["reasoning.encrypted_content"]]);
  });

  it("carries limits, sampling and bookkeeping fields", () => {
    const out = responsesBody(
      {
        messages: [{ role: "user", content: "Hi" }],
        max_tokens: 50,
        max_completion_tokens: 100,
        temperature: 0.3,
        top_p: 0.9,
        user: "hashed-end-user",
        prompt_cache_key: "conversation-1",
        service_tier: "flex",
        metadata: { team: "search" },
      },
      "gpt-5",
      false,
    );
    expect(out).toMatchObject({ max_output_tokens: 100, temperature: 0.3, top_p: 0.9, safety_identifier: "hashed-end-user", prompt_cache_key: "conversation-1", service_tier: "flex", metadata: { team: "search" } });
    expect(responsesBody({ messages: [{ role: "user", content: "Hi" }], max_tokens: 50 }, "gpt-5", false).max_output_tokens).toBe(50);
    const both = responsesBody({ messages: [{ role: "user", content: "Hi" }], user: "hashed-user", safety_identifier: "hashed-safety" }, "gpt-5", false);
    expect(both).toMatchObject({ safety_identifier: "hashed-safety", user: "hashed-user" });
  });

  it("refuses content the Responses API has no part for", () => {
    const body = { messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }] };
    expect(() => responsesBody(body, "gpt-5", false)).toThrow(UpstreamError);
  });
});

describe("responsesCannotCarry", () => {
  it("names the fields a Responses upstream has no place for", () => {
    const body = {
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }, { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }],
      stop: ["\n"],
      n: 2,
      logprobs: true,
      top_logprobs: 3,
      seed: 7,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      logit_bias: { "50256": -100 },
      top_k: 40,
      response_format: { type: "grammar", grammar: "root ::= x" },
    };
    expect(responsesCannotCarry(body)).toEqual(["stop", "n", "logprobs", "top_logprobs", "seed", "frequency_penalty", "presence_penalty", "logit_bias", "top_k", "response_format", "input_audio"]);
  });

  it("lets defaults and what it can carry pass", () => {
    const body = { messages: [{ role: "user", content: "Hi" }], stop: [], n: 1, logprobs: false, frequency_penalty: 0, presence_penalty: 0, seed: null, temperature: 1, response_format: { type: "json_object" } };
    expect(responsesCannotCarry(body)).toEqual([]);
  });
});

/** Everything a stream yields, and what it threw. */
async function drain(stream: AsyncIterable<PartBatch>): Promise<{ batches: PartBatch[]; parts: StreamPart[]; error: unknown }> {
  const batches: PartBatch[] = [];
  try {
    for await (const batch of stream) batches.push(batch);
    return { batches, parts: batches.flat(), error: undefined };
  } catch (error) {
    return { batches, parts: batches.flat(), error };
  }
}

/** The text, reasoning and merged reasoning entries of streamed parts. */
function joined(parts: StreamPart[]) {
  const details: Detail[] = [];
  let text = "";
  let reasoning = "";
  for (const p of parts) {
    if (p.type === "text") text += p.text;
    else if (p.type === "reasoning") reasoning += p.text;
    else if (p.type === "reasoning-detail") mergeDetails(details, [p.detail]);
  }
  return { text, reasoning, details };
}

describe("openAiResponses against a Responses server", () => {
  let fake: FakeResponses;
  const signal = new AbortController().signal;
  const target = (model: string): UpstreamTarget => ({ provider: "openai", baseUrl: fake.baseUrl, apiKey: "sk-test", upstreamModel: model, maxCompletionTokens: null });
  const ask = { messages: [{ role: "user", content: "Hello?" }] };
  const withTools = { messages: [{ role: "user", content: "Weather in Paris?" }], tools: [weatherTool] };
  const usage = { promptTokens: 20, completionTokens: 9, cachedTokens: 4, cacheWriteTokens: 0, reasoningTokens: 0 };

  beforeAll(async () => {
    fake = await startFakeResponses();
  });
  afterAll(() => fake.stop());

  it("answers text, buffered", async () => {
    const completion = await openAiResponses.complete(ask, target("gpt-5"), signal);
    expect(completion).toMatchObject({ id: expect.stringMatching(/^resp_fake_/), usage, serviceTier: "default", systemFingerprint: null });
    expect(completion.choices).toEqual([
      { index: 0, text: "Hello from the fake Responses server.", reasoning: null, reasoningDetails: [], toolCalls: [], finishReason: "stop", fields: {}, choiceFields: {} },
    ]);
    const sent = fake.requests.at(-1)!;
    expect(sent.authorization).toBe("Bearer sk-test");
    expect(sent.body).toMatchObject({ model: "gpt-5", store: false, stream: false, input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Hello?" }] }] });
  });

  it("answers text, streamed, one batch per event", async () => {
    const { batches, parts, error } = await drain(await openAiResponses.stream(ask, target("gpt-5"), signal));
    expect(error).toBeUndefined();
    expect(fake.requests.at(-1)!.body.stream).toBe(true);
    expect(batches[0]).toEqual([
      { type: "metadata", id: expect.stringMatching(/^resp_fake_/) },
      { type: "passthrough", choice: 0, fields: { role: "assistant" } },
      { type: "text", choice: 0, text: "" },
    ]);
    expect(joined(parts).text).toBe("Hello from the fake Responses server.");
    expect(batches.at(-1)).toEqual([
      { type: "metadata", id: expect.any(String), serviceTier: "default" },
      { type: "finish", choice: 0, reason: "stop" },
      { type: "usage", usage },
    ]);
  });

  it("round-trips a function call, buffered", async () => {
    const first = await openAiResponses.complete(withTools, target("gpt-5"), signal);
    const [choice] = first.choices;
    expect(choice).toMatchObject({ text: null, finishReason: "tool_calls" });
    expect(choice!.toolCalls).toEqual([{ id: expect.stringMatching(/^call_fake_/), type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }]);
    expect(fake.requests.at(-1)!.body.tools).toEqual([{ type: "function", name: "get_weather", description: "Weather of a city", parameters: weatherTool.function.parameters }]);
    const callId = choice!.toolCalls[0]!.id;
    const next = { ...withTools, messages: [...withTools.messages, { role: "assistant", content: null, tool_calls: choice!.toolCalls }, { role: "tool", tool_call_id: callId, content: "18°C and sunny" }] };
    const second = await openAiResponses.complete(next, target("gpt-5"), signal);
    expect(second.choices[0]).toMatchObject({ text: "The tool answered: 18°C and sunny", finishReason: "stop" });
    expect((fake.requests.at(-1)!.body.input as Json[]).slice(1)).toEqual([
      { type: "function_call", call_id: callId, name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call_output", call_id: callId, output: "18°C and sunny" },
    ]);
  });

  it("streams a function call as start, argument pieces and end", async () => {
    const { parts, error } = await drain(await openAiResponses.stream(withTools, target("gpt-5"), signal));
    expect(error).toBeUndefined();
    const calls = parts.filter((p) => p.type.startsWith("tool-call"));
    expect(calls).toEqual([
      { type: "tool-call-start", choice: 0, index: 0, id: expect.stringMatching(/^call_fake_/), name: "get_weather" },
      { type: "tool-call-delta", choice: 0, index: 0, arguments: '{"city":' },
      { type: "tool-call-delta", choice: 0, index: 0, arguments: '"Paris"}' },
      { type: "tool-call-end", choice: 0, index: 0 },
    ]);
    expect(parts).toContainEqual({ type: "finish", choice: 0, reason: "tool_calls" });
  });

  it("gives reasoning summaries and encrypted reasoning, numbered alike buffered and streamed, and sends them back", async () => {
    const body = { ...withTools, reasoning: { effort: "medium" } };
    const buffered = await openAiResponses.complete(body, target("o4-mini-reasoning"), signal);
    expect(fake.requests.at(-1)!.body).toMatchObject({ reasoning: { effort: "medium", summary: "auto" }, include: ["reasoning.encrypted_content"] });
    const [choice] = buffered.choices;
    expect(buffered.usage).toEqual({ ...usage, reasoningTokens: 3 });
    expect(choice!.reasoning).toBe("The caller wants a greeting.\n\nA short answer will do.");
    const id = expect.stringMatching(/^rs_fake_/);
    expect(choice!.reasoningDetails).toEqual([
      { type: "reasoning.summary", summary: "The caller wants a greeting.", id, format: "openai-responses-v1", index: 0 },
      { type: "reasoning.summary", summary: "A short answer will do.", id, format: "openai-responses-v1", index: 1 },
      { type: "reasoning.encrypted", data: expect.stringMatching(/^gAAAAB-fake-encrypted-/), id, format: "openai-responses-v1", index: 2 },
    ]);

    const streamed = joined((await drain(await openAiResponses.stream(body, target("o4-mini-reasoning"), signal))).parts);
    expect(streamed.reasoning).toBe(choice!.reasoning);
    expect(streamed.details).toEqual(choice!.reasoningDetails.map((d) => ({ ...d, id: expect.any(String), ...(d.data ? { data: expect.any(String) } : {}) })));

    const next = {
      ...body,
      messages: [...body.messages, { role: "assistant", content: null, reasoning_details: streamed.details, tool_calls: choice!.toolCalls }, { role: "tool", tool_call_id: choice!.toolCalls[0]!.id, content: "sunny" }],
    };
    const last = await openAiResponses.complete(next, target("o4-mini-reasoning"), signal);
    expect(last.choices[0]!.text).toBe("The tool answered: sunny");
    const sent = fake.requests.at(-1)!.body.input as Json[];
    const encrypted = streamed.details.find((d) => d.type === "reasoning.encrypted")!;
    expect(sent.map((i) => i.type)).toEqual(["message", "reasoning", "function_call", "function_call_output"]);
    expect(sent[1]).toEqual({
      type: "reasoning",
      id: encrypted.id,
      summary: [
        { type: "summary_text", text: "The caller wants a greeting." },
        { type: "summary_text", text: "A short answer will do." },
      ],
      encrypted_content: encrypted.data,
    });
  });

  it("reports a response cut by the output limit as length", async () => {
    const buffered = await openAiResponses.complete(ask, target("gpt-5-incomplete"), signal);
    expect(buffered.choices[0]!.finishReason).toBe("length");
    const { parts } = await drain(await openAiResponses.stream(ask, target("gpt-5-incomplete"), signal));
    expect(parts).toContainEqual({ type: "finish", choice: 0, reason: "length" });
  });

  it("passes a refusal on as the message's refusal", async () => {
    const buffered = await openAiResponses.complete(ask, target("gpt-5-refusal"), signal);
    expect(buffered.choices[0]).toMatchObject({ text: null, fields: { refusal: "I can't help with that." } });
    const { parts } = await drain(await openAiResponses.stream(ask, target("gpt-5-refusal"), signal));
    const pieces = parts.flatMap((p) => (p.type === "passthrough" && typeof p.fields.refusal === "string" ? [p.fields.refusal] : []));
    expect(pieces.join("")).toBe("I can't help with that.");
  });

  it("throws the provider's failure mid-stream, after the words that came", async () => {
    const failed = await drain(await openAiResponses.stream(ask, target("gpt-5-fail"), signal));
    expect(joined(failed.parts).text).not.toBe("");
    expect(failed.error).toBeInstanceOf(UpstreamError);
    expect(failed.error).toMatchObject({ status: 502, retryable: false, message: expect.stringContaining("The model failed mid-answer.") });

    const overloaded = await drain(await openAiResponses.stream(ask, target("gpt-5-overloaded"), signal));
    expect(overloaded.error).toMatchObject({ status: 529, message: expect.stringContaining("server_is_overloaded") });

    const errorEvent = await drain(await openAiResponses.stream(ask, target("gpt-5-error-event"), signal));
    expect(errorEvent.error).toMatchObject({ status: 429, message: expect.stringContaining("Rate limit reached") });

    const cut = await drain(await openAiResponses.stream(ask, target("gpt-5-cut"), signal));
    expect(cut.error).toMatchObject({ status: 502, message: expect.stringContaining("ended before the response completed") });
  });

  it("throws a buffered failure", async () => {
    await expect(openAiResponses.complete(ask, target("gpt-5-fail"), signal)).rejects.toMatchObject({ status: 500, retryable: true });
    await expect(openAiResponses.complete(ask, target("gpt-5-overloaded"), signal)).rejects.toMatchObject({ status: 529, retryable: true, message: expect.stringContaining("overloaded") });
  });
});
