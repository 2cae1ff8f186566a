import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { UpstreamError } from "@switchyard/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenLocal } from "../../../../tests/support/listen.js";
import { deepgram } from "./deepgram.js";
import { languageCode, openAiTranscription } from "./openai-transcription.js";
import type { TranscriptionCall, UpstreamTarget } from "./types.js";

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What the fake answers next: a JSON value or raw text; `hang` never answers, `partial` stops mid-body. */
interface Plan {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  raw?: string;
  hang?: boolean;
  partial?: boolean;
}

let plan: Plan = { json: { text: "" } };
let arrived: () => void = () => undefined;
const requests: Received[] = [];
let baseUrl: string;
let stop: () => Promise<void>;

const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  requests.push({ url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) });
  arrived();
  if (plan.hang) return;
  res.writeHead(plan.status ?? 200, { "content-type": "application/json", ...plan.headers });
  if (plan.partial) return void res.write('{"text":"Hal');
  res.end(plan.raw ?? JSON.stringify(plan.json));
});

beforeAll(async () => {
  ({ baseUrl, stop } = await listenLocal(server));
});

afterAll(() => stop());

// Bytes that are not valid UTF-8, so that any text re-encoding on the way would show.
const bytes = Buffer.concat([Buffer.from("RIFF"), randomBytes(4096), Buffer.from([0xff, 0xfe, 0x00, 0x80])]);
const call = (over: Partial<TranscriptionCall> = {}): TranscriptionCall => ({
  audio: { bytes, format: "wav", mediaType: "audio/wav", filename: "speech.wav" },
  verbose: false,
  granularities: [],
  options: {},
  ...over,
});
const target = (over: Partial<UpstreamTarget> = {}): UpstreamTarget => ({
  provider: "openai",
  baseUrl,
  apiKey: "sk-secret",
  upstreamModel: "whisper-1",
  maxCompletionTokens: null,
  ...over,
});
const openAi = (c: TranscriptionCall, t = target()) => openAiTranscription.transcribe(c, t, new AbortController().signal);
const dg = (c: TranscriptionCall, t = target({ provider: "deepgram", apiKey: "dg-secret", upstreamModel: "nova-3" })) =>
  deepgram.transcribe(c, t, new AbortController().signal);
const last = () => requests.at(-1)!;

/** The multipart form the adapter sent, read back by Node's own parser. */
async function sentForm(): Promise<FormData> {
  const { headers, body } = last();
  return new Request("http://fake.invalid/", { method: "POST", headers: { "content-type": headers["content-type"] ?? "" }, body }).formData();
}

/** Every text field of a form, values in order; the file part is checked apart. */
const fields = (form: FormData) => Object.fromEntries([...new Set(form.keys())].filter((k) => k !== "file").map((k) => [k, form.getAll(k)]));

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

describe("OpenAI transcription adapter", () => {
  it("uploads the audio as a file with model, language, temperature and json, and maps token usage", async () => {
    plan = {
      json: {
        text: "Hello from Switchyard.",
        usage: { type: "tokens", input_tokens: 14, output_tokens: 6, total_tokens: 20, input_token_details: { text_tokens: 0, audio_tokens: 14 } },
      },
    };
    const result = await openAi(call({ language: "en", temperature: 0 }), target({ upstreamModel: "gpt-4o-transcribe" }));
    expect(last().url).toBe("/v1/audio/transcriptions");
    expect(last().headers.authorization).toBe("Bearer sk-secret");
    const form = await sentForm();
    const file = form.get("file") as File;
    expect(file.name).toBe("speech.wav");
    expect(file.type).toBe("audio/wav");
    expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true);
    expect(fields(form)).toEqual({ model: ["gpt-4o-transcribe"], language: ["en"], temperature: ["0"], response_format: ["json"] });
    expect(result).toEqual({ text: "Hello from Switchyard.", usage: { inputTokens: 14, outputTokens: 6 } });
  });

  it("asks for verbose_json with each granularity, and maps language, segments, words and duration usage", async () => {
    const words = [
      { word: "Hello", start: 0, end: 0.62 },
      { word: "there", start: 0.7, end: 1.1 },
    ];
    const segment = { id: 0, seek: 0, start: 0, end: 1.1, text: " Hello there.", tokens: [50364, 2425], temperature: 0, avg_logprob: -0.21, compression_ratio: 0.8, no_speech_prob: 0.01 };
    plan = {
      json: {
        task: "transcribe",
        language: "english",
        duration: 2.5,
        text: "Hello there.",
        words,
        segments: [{ ...segment, x_extra: 1 }],
        usage: { type: "duration", seconds: 3 },
      },
    };
    const result = await openAi(call({ verbose: true, granularities: ["word", "segment"] }));
    const form = await sentForm();
    expect(form.get("response_format")).toBe("verbose_json");
    expect(form.getAll("timestamp_granularities[]")).toEqual(["word", "segment"]);
    expect(form.has("language")).toBe(false);
    expect(result).toEqual({
      text: "Hello there.",
      language: "en",
      duration: 2.5,
      words,
      segments: [segment],
      usage: { seconds: 3 },
    });

    await openAi(call({ verbose: true }));
    expect((await sentForm()).getAll("timestamp_granularities[]")).toEqual(["segment"]);
  });

  it("reads a whisper.cpp answer: duration as text, token words inside segments, no usage, and sends no key it does not have", async () => {
    plan = {
      json: {
        task: "transcribe",
        language: "german",
        duration: "11.000000",
        text: " Guten Tag.",
        segments: [{ id: 0, text: " Guten Tag.", start: 0, end: 1.5, tokens: [1], words: [{ word: " Gut", start: 0, end: 0.4, t_dtw: -1, probability: 0.9 }], temperature: 0, avg_logprob: -0.3 }],
      },
    };
    const result = await openAi(call({ verbose: true }), target({ apiKey: undefined, upstreamModel: "ggml-base" }));
    expect(last().headers.authorization).toBeUndefined();
    expect(result).toEqual({
      text: " Guten Tag.",
      language: "de",
      duration: 11,
      segments: [{ id: 0, text: " Guten Tag.", start: 0, end: 1.5, tokens: [1], temperature: 0, avg_logprob: -0.3 }],
      usage: { seconds: 11 },
    });
  });

  it("maps language names to ISO-639-1 codes and keeps what it does not know", () => {
    expect(languageCode("English")).toBe("en");
    expect(languageCode("haitian creole")).toBe("ht");
    expect(languageCode("FR")).toBe("fr");
    expect(languageCode("hawaiian")).toBe("hawaiian");
  });

  it("passes provider options as extra fields, JSON for objects, without overriding the request's own fields", async () => {
    plan = { json: { text: "ok" } };
    await openAi(
      call({
        options: { prompt: "Switchyard, OpenRouter", chunking_strategy: { type: "server_vad" }, include: ["logprobs"], stream: false, top: 3, model: "other", response_format: "text", skipped: null },
      }),
    );
    expect(fields(await sentForm())).toEqual({
      model: ["whisper-1"],
      response_format: ["json"],
      prompt: ["Switchyard, OpenRouter"],
      chunking_strategy: ['{"type":"server_vad"}'],
      include: ['["logprobs"]'],
      stream: ["false"],
      top: ["3"],
    });
  });

  it("makes a 429 with Retry-After retryable with its delay, a 500 retryable, and a 400 final", async () => {
    plan = { status: 429, headers: { "retry-after": "7" }, json: { error: { message: "Rate limit reached" } } };
    const limited = await failure(openAi(call()));
    expect([limited.status, limited.retryable, limited.retryAfterMs]).toEqual([429, true, 7000]);
    expect(limited.message).toContain("Rate limit reached");

    plan = { status: 500, json: { error: { message: "boom" } } };
    const broken = await failure(openAi(call()));
    expect([broken.status, broken.retryable]).toEqual([500, true]);

    plan = { status: 400, json: { error: { message: "Invalid file format." } } };
    const refused = await failure(openAi(call()));
    expect([refused.status, refused.retryable]).toEqual([400, false]);
  });

  it("makes a body that is not a transcription a retryable 502", async () => {
    for (const next of [{ raw: "<html>bad gateway</html>" }, { json: {} }, { json: { text: 5 } }, { json: { text: "x", segments: [{ id: 0, text: "x" }] } }]) {
      plan = next;
      const error = await failure(openAi(call({ verbose: true })));
      expect([error.status, error.retryable, error.message]).toEqual([502, true, "openai sent a response that is not a transcription"]);
    }
  });

  it("rejects with the abort, not an upstream error, when the signal fires while waiting or while reading", async () => {
    for (const next of [{ hang: true }, { partial: true }]) {
      plan = next;
      const controller = new AbortController();
      const seen = new Promise<void>((resolve) => (arrived = resolve));
      const pending = openAiTranscription.transcribe(call(), target(), controller.signal).then(
        () => "resolved",
        (e: unknown) => e,
      );
      await seen;
      await new Promise((resolve) => setTimeout(resolve, 20));
      controller.abort();
      const outcome = await pending;
      expect(outcome).not.toBeInstanceOf(UpstreamError);
      expect((outcome as Error).name).toBe("AbortError");
    }
    arrived = () => undefined;
  });
});

const deepgramAnswer = {
  metadata: { request_id: "b7f0", duration: 3.52, channels: 1, models: ["30089e05"] },
  results: {
    channels: [
      {
        detected_language: "en",
        language_confidence: 0.98,
        alternatives: [
          {
            transcript: "Hello there. Switchyard here.",
            confidence: 0.99,
            words: [
              { word: "hello", punctuated_word: "Hello", start: 0.08, end: 0.4, confidence: 0.99, speaker: 0, speaker_confidence: 0.8 },
              { word: "there", punctuated_word: "there.", start: 0.4, end: 0.8, confidence: 0.97, speaker: 0 },
              { word: "switchyard", start: 1.2, end: 1.9, confidence: 0.91 },
            ],
          },
        ],
      },
    ],
    utterances: [
      { id: "u-1", start: 0.08, end: 0.8, confidence: 0.98, channel: 0, transcript: "Hello there.", speaker: 0, words: [] },
      { id: "u-2", start: 1.2, end: 2.3, confidence: 0.9, channel: 0, transcript: "Switchyard here.", speaker: 1, words: [] },
    ],
  },
};

describe("Deepgram transcription adapter", () => {
  it("sends the raw audio with its type and the settings and options in the query, and maps words, utterances and duration", async () => {
    plan = { json: deepgramAnswer };
    const result = await dg(
      call({ verbose: true, granularities: ["word", "segment"], temperature: 0.5, options: { keyterm: ["Switchyard", "OpenRouter"], diarize: true, smart_format: false, model: "other" } }),
    );
    const url = new URL(last().url, "http://fake.invalid");
    expect(url.pathname).toBe("/v1/listen");
    expect([...url.searchParams.entries()].sort()).toEqual([
      ["detect_language", "true"],
      ["diarize", "true"],
      ["keyterm", "OpenRouter"],
      ["keyterm", "Switchyard"],
      ["model", "nova-3"],
      ["smart_format", "false"],
      ["utterances", "true"],
    ]);
    expect(last().headers.authorization).toBe("Token dg-secret");
    expect(last().headers["content-type"]).toBe("audio/wav");
    expect(last().body.equals(bytes)).toBe(true);
    expect(result).toEqual({
      text: "Hello there. Switchyard here.",
      language: "en",
      duration: 3.52,
      words: [
        { word: "Hello", start: 0.08, end: 0.4, confidence: 0.99, speaker: 0 },
        { word: "there.", start: 0.4, end: 0.8, confidence: 0.97, speaker: 0 },
        { word: "switchyard", start: 1.2, end: 1.9, confidence: 0.91 },
      ],
      segments: [
        { id: 0, start: 0.08, end: 0.8, text: "Hello there.", confidence: 0.98, speaker: 0 },
        { id: 1, start: 1.2, end: 2.3, text: "Switchyard here.", confidence: 0.9, speaker: 1 },
      ],
      usage: { seconds: 3.52 },
    });
  });

  it("sends a given language instead of detection, asks no utterances unless segments are wanted, and returns only what was asked", async () => {
    plan = { json: deepgramAnswer };
    const plain = await dg(call({ language: "de", temperature: 0.2 }));
    expect(new URL(last().url, "http://fake.invalid").search).toBe("?model=nova-3&language=de&smart_format=true");
    expect(plain).toEqual({ text: "Hello there. Switchyard here.", language: "en", duration: 3.52, usage: { seconds: 3.52 } });

    const wordsOnly = await dg(call({ verbose: true, granularities: ["word"] }), target({ apiKey: undefined, baseUrl: `${baseUrl}/`, upstreamModel: "nova-3" }));
    expect(new URL(last().url, "http://fake.invalid").searchParams.has("utterances")).toBe(false);
    expect(last().headers.authorization).toBeUndefined();
    expect(wordsOnly.words).toHaveLength(3);
  });

  it("keeps Deepgram's errors retryable or not by status, and a body without a channel a retryable 502", async () => {
    plan = { status: 503, json: { err_code: "SERVICE_UNAVAILABLE" } };
    const unavailable = await failure(dg(call()));
    expect([unavailable.status, unavailable.retryable]).toEqual([503, true]);

    plan = { status: 402, json: { err_code: "ASR_PAYMENT_REQUIRED" } };
    const unpaid = await failure(dg(call()));
    expect([unpaid.status, unpaid.retryable]).toEqual([402, false]);

    plan = { json: { metadata: { duration: 1 }, results: { channels: [] } } };
    const empty = await failure(dg(call()));
    expect([empty.status, empty.retryable, empty.message]).toEqual([502, true, "deepgram sent a response that is not a transcription"]);
  });
});
