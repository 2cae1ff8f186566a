import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PartBatch } from "../generation/parts.js";
import { echoedField, echoedOf, openAiText } from "./openai-text.js";
import { UpstreamError, type UpstreamTarget } from "./types.js";

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

const logprobs = { tokens: [" there", "!"], token_logprobs: [-0.1, -0.2], top_logprobs: [{ " there": -0.1 }, { "!": -0.2 }], text_offset: [5, 11] };

const buffered = {
  id: "cmpl-abc",
  object: "text_completion",
  created: 1_700_000_000,
  model: "gpt-3.5-turbo-instruct",
  system_fingerprint: "fp_1",
  choices: [{ text: " there!", index: 0, logprobs, finish_reason: "length", stop_reason: null }],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 3 } },
};

/** A legacy stream as OpenAI sends it with `include_usage`: text frames, a finish, then usage alone. */
const streamed = [
  { id: "cmpl-s", object: "text_completion", created: 1, model: "m", system_fingerprint: "fp_2", choices: [{ text: " there", index: 0, logprobs: { tokens: [" there"], token_logprobs: [-0.1], top_logprobs: null, text_offset: [5] }, finish_reason: null }] },
  { id: "cmpl-s", object: "text_completion", created: 1, model: "m", system_fingerprint: "fp_2", choices: [{ text: "", index: 0, logprobs: null, finish_reason: "stop" }] },
  { id: "cmpl-s", object: "text_completion", created: 1, model: "m", choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } },
];

/** An echoed stream: the prompt "Hello" in two pieces, the second with the first words after it, as servers split it. */
const echoedStream = [
  { id: "cmpl-e", choices: [{ text: "Hel", index: 0, logprobs: null, finish_reason: null }] },
  { id: "cmpl-e", choices: [{ text: "lo there", index: 0, logprobs: null, finish_reason: null }] },
  { id: "cmpl-e", choices: [{ text: "!", index: 0, logprobs: null, finish_reason: "stop" }] },
];

/** A legacy choice as OpenRouter answers one that reasoned. */
const reasoned = { ...buffered, choices: [{ text: " there!", reasoning: "Greet back.", index: 0, logprobs: null, finish_reason: "stop" }] };

const sse = (frames: unknown[]) => `${frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join("")}data: [DONE]\n\n`;

/** What the fake answers for one upstream model: a status, a content type and a body. */
const plans: Record<string, { status?: number; type?: string; body: string; headers?: Record<string, string> }> = {
  buffered: { body: JSON.stringify(buffered) },
  streamed: { type: "text/event-stream", body: sse(streamed) },
  garbage: { body: "<html>upstream proxy error</html>" },
  limited: { status: 429, body: '{"error":{"message":"slow down"}}', headers: { "retry-after": "3" } },
  echoed: { body: JSON.stringify({ ...buffered, choices: [{ ...buffered.choices[0], text: "Hello there!" }] }) },
  "echoed-stream": { type: "text/event-stream", body: sse(echoedStream) },
  reasoned: { body: JSON.stringify(reasoned) },
  "reasoned-stream": { type: "text/event-stream", body: sse([{ id: "cmpl-r", choices: [{ text: "", reasoning: "Greet back.", index: 0, finish_reason: null }] }, ...streamed]) },
  "bad-chunk": { type: "text/event-stream", body: `data: ${JSON.stringify(streamed[0])}\n\ndata: {not json\n\n` },
};

let server: Server;
let baseUrl: string;
const requests: Received[] = [];

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    const plan = plans[String(body.model)];
    if (!plan) return void res.writeHead(404).end();
    res.writeHead(plan.status ?? 200, { "content-type": plan.type ?? "application/json", ...plan.headers });
    // Small writes, so that events arrive split across reads.
    for (let i = 0; i < plan.body.length; i += 29) {
      res.write(plan.body.slice(i, i + 29));
      await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests.length = 0;
});

const target = (model: string, keyed = true): UpstreamTarget => ({ provider: "openai", baseUrl, apiKey: keyed ? "sk-upstream" : undefined, upstreamModel: model, maxCompletionTokens: null });

const signal = () => new AbortController().signal;

/** Every batch a stream yields. */
async function collect(stream: AsyncIterable<PartBatch>): Promise<PartBatch[]> {
  const batches: PartBatch[] = [];
  for await (const batch of stream) batches.push(batch);
  return batches;
}

describe("openAiText.complete", () => {
  it("posts the body to /completions with the key and the upstream model, unstreamed", async () => {
    await openAiText.complete({ model: "caller/model", prompt: "Hello", max_tokens: 2, logprobs: 1 }, target("buffered"), signal());
    expect(requests).toEqual([
      {
        method: "POST",
        url: "/v1/completions",
        headers: expect.objectContaining({ authorization: "Bearer sk-upstream", "content-type": "application/json" }),
        body: { model: "buffered", prompt: "Hello", max_tokens: 2, logprobs: 1, stream: false },
      },
    ]);
  });

  it("sends no authorization without a key", async () => {
    await openAiText.complete({ prompt: "Hello" }, target("buffered", false), signal());
    expect(requests[0]?.headers.authorization).toBeUndefined();
  });

  it("answers the text, logprobs, finish reason and usage", async () => {
    const completion = await openAiText.complete({ prompt: "Hello" }, target("buffered"), signal());
    expect(completion).toEqual({
      id: "cmpl-abc",
      choices: [
        {
          index: 0,
          text: " there!",
          reasoning: null,
          reasoningDetails: [],
          toolCalls: [],
          finishReason: "length",
          fields: {},
          choiceFields: { logprobs, stop_reason: null },
        },
      ],
      usage: { promptTokens: 5, completionTokens: 2, cachedTokens: 3, cacheWriteTokens: 0, reasoningTokens: 0 },
      systemFingerprint: "fp_1",
      serviceTier: null,
    });
  });

  it("keeps the echoed prompt apart from the generated text, as a choice field", async () => {
    const completion = await openAiText.complete({ prompt: "Hello", echo: true }, target("echoed"), signal());
    expect(completion.choices[0]).toMatchObject({ text: " there!", choiceFields: { [echoedField]: "Hello", logprobs } });
    expect(echoedOf(completion.choices[0]!.choiceFields)).toBe("Hello");
    // Without echo, or when the text does not start with the prompt as sent, all of it is the model's.
    const unasked = await openAiText.complete({ prompt: "Hello" }, target("echoed"), signal());
    expect(unasked.choices[0]).toMatchObject({ text: "Hello there!", choiceFields: { logprobs } });
    expect(echoedOf(unasked.choices[0]!.choiceFields)).toBe("");
    const other = await openAiText.complete({ prompt: "Hello, world", echo: true }, target("echoed"), signal());
    expect(other.choices[0]?.text).toBe("Hello there!");
  });

  it("reads a choice's reasoning, as OpenRouter's legacy route answers it", async () => {
    const completion = await openAiText.complete({ prompt: "Hello", reasoning: { effort: "low" } }, target("reasoned"), signal());
    expect(completion.choices[0]).toMatchObject({ text: " there!", reasoning: "Greet back.", choiceFields: { logprobs: null } });
    expect(completion.choices[0]?.choiceFields).not.toHaveProperty("reasoning");
  });

  it("refuses an answer that is not a text completion, so another endpoint may be tried", async () => {
    const failure = await openAiText.complete({ prompt: "Hello" }, target("garbage"), signal()).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ status: 502, retryable: true });
  });

  it("relays an error status as a retryable failure with its wait", async () => {
    const failure = await openAiText.complete({ prompt: "Hello" }, target("limited"), signal()).catch((e: unknown) => e);
    expect(failure).toMatchObject({ status: 429, retryable: true, retryAfterMs: 3000 });
  });
});

describe("openAiText.stream", () => {
  it("asks for a stream with usage", async () => {
    await collect(await openAiText.stream({ prompt: "Hello", echo: true }, target("streamed"), signal()));
    expect(requests[0]).toMatchObject({
      url: "/v1/completions",
      headers: { authorization: "Bearer sk-upstream" },
      body: { model: "streamed", prompt: "Hello", echo: true, stream: true, stream_options: { include_usage: true } },
    });
  });

  it("yields one batch per event: metadata once, text with its logprobs, the finish, then usage", async () => {
    const batches = await collect(await openAiText.stream({ prompt: "Hello" }, target("streamed"), signal()));
    expect(batches).toEqual([
      [
        { type: "metadata", id: "cmpl-s", systemFingerprint: "fp_2", serviceTier: null },
        { type: "text", choice: 0, text: " there" },
        { type: "passthrough", choice: 0, fields: {}, choiceFields: { logprobs: streamed[0]?.choices[0]?.logprobs } },
      ],
      [{ type: "finish", choice: 0, reason: "stop" }],
      [{ type: "usage", usage: { promptTokens: 5, completionTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 } }],
    ]);
  });

  it("keeps the echoed prompt apart from the generated text when it arrives in pieces", async () => {
    const batches = await collect(await openAiText.stream({ prompt: "Hello", echo: true }, target("echoed-stream"), signal()));
    const parts = batches.flat().filter((p) => p.type === "text" || p.type === "passthrough");
    expect(parts).toEqual([
      { type: "passthrough", choice: 0, fields: {}, choiceFields: { [echoedField]: "Hel" } },
      { type: "passthrough", choice: 0, fields: {}, choiceFields: { [echoedField]: "lo" } },
      { type: "text", choice: 0, text: " there" },
      { type: "text", choice: 0, text: "!" },
    ]);
    const unasked = await collect(await openAiText.stream({ prompt: "Hello" }, target("echoed-stream"), signal()));
    expect(unasked.flat().filter((p) => p.type === "text").map((p) => (p.type === "text" ? p.text : ""))).toEqual(["Hel", "lo there", "!"]);
  });

  it("yields a streamed choice's reasoning before its text", async () => {
    const batches = await collect(await openAiText.stream({ prompt: "Hello" }, target("reasoned-stream"), signal()));
    expect(batches[0]).toEqual([
      { type: "metadata", id: "cmpl-r", systemFingerprint: null, serviceTier: null },
      { type: "reasoning", choice: 0, text: "Greet back." },
    ]);
  });

  it("fails the stream on a chunk that does not parse", async () => {
    const stream = await openAiText.stream({ prompt: "Hello" }, target("bad-chunk"), signal());
    const failure = await collect(stream).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ status: 502, retryable: false });
  });

  it("throws before any batch when the provider refuses the request", async () => {
    await expect(openAiText.stream({ prompt: "Hello" }, target("limited"), signal())).rejects.toMatchObject({ status: 429 });
  });
});
