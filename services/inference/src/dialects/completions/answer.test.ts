import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import type { Completion as SdkCompletion, CompletionChoice as SdkChoice } from "openai/resources/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textCompletion, textCompletionChunk, type TextCompletionChunk } from "@switchyard/contracts";
import type { Completion, CompletionChoice, PartBatch } from "../../generation/parts.js";
import type { Accounted } from "../../accounting.js";
import { echoedField } from "../../providers/openai-text.js";
import { completionBody, completionChunk, echoChunk, errorChunk, textFinishReason, usageChunk, type TextFrame } from "./answer.js";

/**
 * OpenAI's SDK types of a completion, but with the nulls its API sends for an echoed prompt's first token
 * (which has no logprob), and, in streamed frames, the null finish reason of every frame before the last.
 */
type SdkLogprobs = Omit<SdkChoice.Logprobs, "token_logprobs" | "top_logprobs"> & {
  token_logprobs?: Array<number | null>;
  top_logprobs?: Array<Record<string, number> | null> | null;
};
type SdkBodyChoice = Omit<SdkChoice, "logprobs"> & { logprobs: SdkLogprobs | null };
type SdkBody = Omit<SdkCompletion, "choices"> & { choices: SdkBodyChoice[] };
type SdkChunk = Omit<SdkCompletion, "choices"> & { choices: Array<Omit<SdkBodyChoice, "finish_reason"> & { finish_reason: SdkChoice["finish_reason"] | "error" | null }> };

const frame: TextFrame = { id: "gen-1", created: 1_700_000_000, model: "openai/gpt-3.5-turbo-instruct", provider: "OpenAI" };

const accounted: Accounted = {
  usage: { promptTokens: 5, completionTokens: 2, cachedTokens: 3, cacheWriteTokens: 0, reasoningTokens: 0 },
  estimated: false,
  cost: { prompt: 5_000_000n, completion: 4_000_000n, request: 0n, total: 9_000_000n },
  charge: { charged: 9_000_000n, reported: 9_000_000n },
  isByok: false,
  billed: 9_000_000n,
};

const logprobs: { tokens: string[]; token_logprobs: number[]; top_logprobs: Array<Record<string, number>>; text_offset: number[] } = {
  tokens: [" there", "!"],
  token_logprobs: [-0.1, -0.2],
  top_logprobs: [{ " there": -0.1 }, { "!": -0.2 }],
  text_offset: [5, 11],
};

const choice = (over: Partial<CompletionChoice> = {}): CompletionChoice => ({
  index: 0,
  text: " there!",
  reasoning: null,
  reasoningDetails: [],
  toolCalls: [],
  finishReason: "length",
  fields: {},
  choiceFields: { logprobs },
  ...over,
});

const completion = (over: Partial<Completion> = {}): Completion => ({ id: "cmpl-1", choices: [choice()], usage: accounted.usage, systemFingerprint: "fp_1", serviceTier: null, ...over });

describe("textFinishReason", () => {
  it("keeps the legacy reasons and reads the others as stop", () => {
    expect(textFinishReason("length")).toBe("length");
    expect(textFinishReason("max_tokens")).toBe("length");
    expect(textFinishReason("SAFETY")).toBe("content_filter");
    expect(textFinishReason("tool_calls")).toBe("stop");
    expect(textFinishReason("end_turn")).toBe("stop");
    expect(textFinishReason(null)).toBeNull();
  });
});

describe("completionBody", () => {
  it("writes a text_completion OpenAI's SDK types, with priced usage", () => {
    const body = completionBody(completion(), accounted, frame);
    const typed: SdkBody = body;
    expect(typed.object).toBe("text_completion");
    expect(body).toEqual({
      id: "gen-1",
      object: "text_completion",
      created: 1_700_000_000,
      model: "openai/gpt-3.5-turbo-instruct",
      provider: "OpenAI",
      system_fingerprint: "fp_1",
      choices: [{ text: " there!", index: 0, logprobs, finish_reason: "length", native_finish_reason: "length" }],
      usage: expect.objectContaining({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 3 }, cost: 0.000009, is_byok: false }),
    });
    expect(textCompletion.parse(body)).toEqual(body);
  });

  it("prepends the prompt when a chat endpoint served an echo", () => {
    const body = completionBody(completion({ choices: [choice({ text: "Paris.", finishReason: "end_turn", choiceFields: {} })] }), accounted, frame, { echoPrompt: "Capital of France? " });
    expect(body.choices).toEqual([{ text: "Capital of France? Paris.", index: 0, logprobs: null, finish_reason: "stop", native_finish_reason: "end_turn" }]);
  });

  it("puts a legacy route's echo, kept apart from the generated text, back in front of it", () => {
    const echoed = choice({ text: " there!", choiceFields: { [echoedField]: "Hello", logprobs } });
    const body = completionBody(completion({ choices: [echoed] }), accounted, frame);
    expect(body.choices).toEqual([{ text: "Hello there!", index: 0, logprobs, finish_reason: "length", native_finish_reason: "length" }]);
    expect(textCompletion.parse(body)).toEqual(body);
  });

  it("writes reasoning unless hidden, and never chat's logprobs", () => {
    const reasoned = completion({ systemFingerprint: null, choices: [choice({ text: null, reasoning: "Think.", finishReason: null, choiceFields: { logprobs: { content: [] } } })] });
    const shown = completionBody(reasoned, accounted, frame);
    expect(shown.system_fingerprint).toBeUndefined();
    expect(shown.choices).toEqual([{ text: "", index: 0, logprobs: null, finish_reason: "stop", native_finish_reason: null, reasoning: "Think." }]);
    expect(completionBody(reasoned, accounted, frame, { hideReasoning: true }).choices[0]).not.toHaveProperty("reasoning");
  });
});

describe("completionChunk", () => {
  it("writes an event's text, logprobs and fingerprint", () => {
    const batch: PartBatch = [
      { type: "metadata", id: "cmpl-s", systemFingerprint: "fp_2", serviceTier: null },
      { type: "text", choice: 0, text: " the" },
      { type: "text", choice: 0, text: "re" },
      { type: "passthrough", choice: 0, fields: {}, choiceFields: { logprobs } },
    ];
    const chunk = completionChunk(batch, frame);
    const typed: SdkChunk | undefined = chunk;
    expect(typed?.object).toBe("text_completion");
    expect(chunk).toEqual({
      id: "gen-1",
      object: "text_completion",
      created: 1_700_000_000,
      model: "openai/gpt-3.5-turbo-instruct",
      provider: "OpenAI",
      system_fingerprint: "fp_2",
      choices: [{ text: " there", index: 0, logprobs, finish_reason: null, native_finish_reason: null }],
    });
    expect(textCompletionChunk.parse(chunk)).toEqual(chunk);
  });

  it("writes a legacy route's echo where it came, ahead of the generated text", () => {
    const batch: PartBatch = [
      { type: "passthrough", choice: 0, fields: {}, choiceFields: { [echoedField]: "Hello" } },
      { type: "text", choice: 0, text: " there" },
      { type: "passthrough", choice: 0, fields: {}, choiceFields: { logprobs } },
    ];
    expect(completionChunk(batch, frame)?.choices).toEqual([{ text: "Hello there", index: 0, logprobs, finish_reason: null, native_finish_reason: null }]);
    const alone = completionChunk([{ type: "passthrough", choice: 0, fields: {}, choiceFields: { [echoedField]: "Hel" } }], frame);
    expect(alone?.choices).toEqual([{ text: "Hel", index: 0, logprobs: null, finish_reason: null, native_finish_reason: null }]);
  });

  it("normalises the finish and keeps the native one", () => {
    const chunk = completionChunk([{ type: "finish", choice: 0, reason: "max_tokens" }], { ...frame, systemFingerprint: "fp_3" });
    expect(chunk?.system_fingerprint).toBe("fp_3");
    expect(chunk?.choices).toEqual([{ text: "", index: 0, logprobs: null, finish_reason: "length", native_finish_reason: "max_tokens" }]);
  });

  it("says nothing for an event the caller does not see", () => {
    expect(completionChunk([{ type: "usage", usage: accounted.usage }], frame)).toBeUndefined();
    expect(completionChunk([{ type: "passthrough", choice: 0, fields: { role: "assistant" }, choiceFields: { logprobs: null } }], frame)).toBeUndefined();
    expect(completionChunk([{ type: "reasoning", choice: 0, text: "hmm" }], frame, { hideReasoning: true })).toBeUndefined();
    expect(completionChunk([{ type: "tool-call-start", choice: 0, index: 0, id: "c", name: "f" }], frame)).toBeUndefined();
  });

  it("writes each choice of an event in the order it came", () => {
    const chunk = completionChunk(
      [
        { type: "text", choice: 1, text: "b" },
        { type: "reasoning", choice: 0, text: "r" },
        { type: "text", choice: 0, text: "a" },
      ],
      frame,
    );
    expect(chunk?.choices.map((c) => [c.index, c.text, c.reasoning])).toEqual([
      [1, "b", undefined],
      [0, "a", "r"],
    ]);
  });
});

describe("the stream's other frames", () => {
  it("echoes the prompt first, closes with the usage alone, and fails in band", () => {
    expect(echoChunk(frame, "Once").choices).toEqual([{ text: "Once", index: 0, logprobs: null, finish_reason: null, native_finish_reason: null }]);
    const last = usageChunk(accounted, frame);
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    const failed = errorChunk(frame, 502, "Provider returned error mid-stream");
    expect(failed).toMatchObject({ choices: [{ finish_reason: "error" }], error: { code: 502, message: "Provider returned error mid-stream" } });
    for (const chunk of [echoChunk(frame, "Once"), last, failed]) expect(textCompletionChunk.parse(chunk)).toEqual(chunk);
  });
});

describe("OpenAI's SDK reading the rendered answers", () => {
  let server: Server;
  let client: OpenAI;
  const frames: TextCompletionChunk[] = [
    echoChunk(frame, "Once"),
    completionChunk([{ type: "text", choice: 0, text: " upon" }], frame) as TextCompletionChunk,
    completionChunk([{ type: "finish", choice: 0, reason: "stop" }], frame) as TextCompletionChunk,
    usageChunk(accounted, frame),
  ];

  beforeAll(async () => {
    server = createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const stream = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { stream?: boolean }).stream === true;
        if (!stream) return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(completionBody(completion(), accounted, frame)));
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`${frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join("")}data: [DONE]\n\n`);
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    client = new OpenAI({ apiKey: "sk-test", baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`, maxRetries: 0 });
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("reads a buffered answer", async () => {
    const answer = await client.completions.create({ model: frame.model, prompt: "Hello" });
    expect(answer.choices[0]).toMatchObject({ text: " there!", finish_reason: "length", logprobs });
    expect(answer.usage?.total_tokens).toBe(7);
  });

  it("reads a stream", async () => {
    let text = "";
    let usage: number | undefined;
    for await (const chunk of await client.completions.create({ model: frame.model, prompt: "Once", echo: true, stream: true })) {
      text += chunk.choices.map((c) => c.text).join("");
      usage = chunk.usage?.total_tokens ?? usage;
    }
    expect(text).toBe("Once upon");
    expect(usage).toBe(7);
  });
});
