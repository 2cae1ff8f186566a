import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenLocal } from "./listen.js";

/** How the fake answers, picked by the upstream model name. */
export type MediaBehavior =
  | "ok"
  | "tokens"
  | "over-usage"
  | "absurd-usage"
  | "svg"
  | "url-only"
  | "blocked"
  | "no-usage"
  | "extra"
  | "fail-500"
  | "rate-limited"
  | "bad-request"
  | "overloaded"
  | "stall"
  | "partial-stall"
  | "cut";

export interface MediaRequest {
  path: string;
  headers: IncomingMessage["headers"];
  /** JSON bodies as parsed; multipart text fields by name (repeated names as arrays). */
  fields: Record<string, unknown>;
  /** Sizes of file parts or of a raw body, in order. */
  files: Array<{ name: string; size: number; type: string; filename: string; bytes: Buffer }>;
  raw: Buffer;
}

export interface FakeMediaProvider {
  baseUrl: string;
  requests: MediaRequest[];
  /** Requests whose client went away before the answer ended. */
  aborted: number;
  stop(): Promise<void>;
}

/** A 1x1 PNG. */
export const tinyPng = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

/** A WAV's length as a decoder hears it: its samples at the header's rate, channels and sample size. */
function wavSeconds(bytes: Buffer): number {
  if (bytes.toString("latin1", 0, 4) !== "RIFF") return 0;
  const bytesPerSecond = (bytes.readUInt32LE(24) * bytes.readUInt16LE(22) * bytes.readUInt16LE(34)) / 8;
  return bytesPerSecond ? (bytes.length - 44) / bytesPerSecond : 0;
}

async function read(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function parse(req: IncomingMessage, raw: Buffer): Promise<Pick<MediaRequest, "fields" | "files">> {
  const type = req.headers["content-type"] ?? "";
  if (type.startsWith("application/json")) return { fields: JSON.parse(raw.toString("utf8")) as Record<string, unknown>, files: [] };
  if (type.startsWith("multipart/form-data")) {
    const form = await new Request("http://fake/", { method: "POST", headers: { "content-type": type }, body: raw }).formData();
    const fields: Record<string, unknown> = {};
    const files: MediaRequest["files"] = [];
    for (const [name, value] of form.entries()) {
      if (typeof value === "string") {
        const seen = fields[name];
        fields[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
      } else files.push({ name, size: value.size, type: value.type, filename: value.name, bytes: Buffer.from(await value.arrayBuffer()) });
    }
    return { fields, files };
  }
  return { fields: {}, files: [{ name: "body", size: raw.length, type, filename: "", bytes: raw }] };
}

const modelOf = (path: string, fields: Record<string, unknown>) =>
  String(fields.model ?? new URL(path, "http://fake").searchParams.get("model") ?? /\/models\/([^:/]+):/.exec(path)?.[1] ?? "");

/** Tokens `over-usage` reports for all audio: far more than its length allows (`absurd-usage`: five trillion of each). */
export const overTranscription = { input_tokens: 1_000_000, output_tokens: 500_000 };

function transcription(path: string, fields: Record<string, unknown>, audio: number, seconds: number, behavior: MediaBehavior) {
  const text = `Fake transcript of ${audio} bytes`;
  if (path.includes("/listen")) {
    return {
      metadata: { request_id: "dg-1", duration: seconds, channels: 1 },
      results: {
        channels: [{ detected_language: "en", alternatives: [{ transcript: text, confidence: 0.9, words: [{ word: "fake", punctuated_word: "Fake", start: 0, end: 0.4, confidence: 0.9 }] }] }],
        utterances: [{ start: 0, end: seconds, transcript: text, confidence: 0.9 }],
      },
    };
  }
  const verbose = fields.response_format === "verbose_json";
  return {
    text,
    ...(verbose
      ? {
          task: "transcribe",
          language: "english",
          duration: seconds,
          segments: [{ id: 0, seek: 0, start: 0, end: seconds, text, tokens: [1, 2], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 }],
          words: [{ word: "Fake", start: 0, end: 0.4 }],
        }
      : {}),
    ...(behavior === "no-usage"
      ? {}
      : behavior === "tokens"
        ? { usage: { type: "tokens", input_tokens: 120, output_tokens: 12, total_tokens: 132 } }
        : behavior === "over-usage"
          ? { usage: { type: "tokens", ...overTranscription, total_tokens: overTranscription.input_tokens + overTranscription.output_tokens } }
        : behavior === "absurd-usage"
          ? { usage: { type: "tokens", input_tokens: 5e12, output_tokens: 5e12, total_tokens: 1e13 } }
        : { usage: { type: "duration", seconds: Math.ceil(seconds) } }),
  };
}

/** What a vector image server draws. */
export const tinySvg = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect width="1" height="1" fill="#e11"/></svg>';

function imageAnswer(path: string, fields: Record<string, unknown>, behavior: MediaBehavior) {
  const b64 = (behavior === "svg" ? Buffer.from(tinySvg, "utf8") : tinyPng).toString("base64");
  if (path.includes(":generateContent")) {
    if (behavior === "blocked") return { promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 12 } };
    // `extra`: three images where one was asked for.
    const inline = Array.from({ length: behavior === "extra" ? 3 : 1 }, () => ({ inlineData: { mimeType: "image/png", data: b64 } }));
    return {
      candidates: [{ content: { role: "model", parts: [{ text: "Here it is" }, ...inline] }, finishReason: "STOP" }],
      usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 1290, totalTokenCount: 1302 },
    };
  }
  // `extra`: two images more than asked for.
  const n = Number(fields.n ?? 1) + (behavior === "extra" ? 2 : 0);
  return {
    created: 1_700_000_000,
    data: Array.from({ length: n }, () => (behavior === "url-only" ? { url: "https://images.example/1.png" } : { b64_json: b64 })),
    ...(behavior === "no-usage" ? {} : { usage: { input_tokens: 20, output_tokens: 1000 * n, total_tokens: 20 + 1000 * n } }),
  };
}

function streamImages(res: ServerResponse, edit: boolean, behavior: MediaBehavior): void {
  const prefix = edit ? "image_edit" : "image_generation";
  const b64 = tinyPng.toString("base64");
  res.writeHead(200, { "content-type": "text/event-stream" });
  const events = [
    { type: `${prefix}.partial_image`, b64_json: b64, partial_image_index: 0 },
    { type: `${prefix}.partial_image`, b64_json: b64, partial_image_index: 1 },
    { type: `${prefix}.completed`, b64_json: b64, usage: { input_tokens: 20, output_tokens: 1200, total_tokens: 1220 } },
  ];
  const sent = behavior === "cut" || behavior === "partial-stall" ? events.slice(0, 1) : events;
  for (const event of sent) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  // `partial-stall`: the first partial image, then nothing more until the client goes.
  if (behavior === "partial-stall") return;
  // The connection drops after what was written has left, as when a provider dies mid-stream.
  if (behavior === "cut") return void res.write("", () => setTimeout(() => res.socket?.destroy(), 20));
  res.end();
}

/**
 * One fake for every media wire format the gateway speaks: OpenAI-style `/audio/transcriptions`,
 * `/images/generations` and `/images/edits` (streamed too), Deepgram's `/listen`, and Gemini's
 * `:generateContent` for images. The upstream model name picks the behaviour.
 */
export async function startFakeMediaProvider(): Promise<FakeMediaProvider> {
  const fake: FakeMediaProvider = { baseUrl: "", requests: [], aborted: 0, stop: async () => {} };
  const server = createServer(async (req, res) => {
    const raw = await read(req);
    const path = req.url ?? "";
    const { fields, files } = await parse(req, raw);
    fake.requests.push({ path, headers: req.headers, fields, files, raw });
    res.on("close", () => {
      if (!res.writableFinished) fake.aborted++;
    });
    const behavior = modelOf(path, fields) as MediaBehavior;
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      void res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
    if (behavior === "fail-500") return json(500, { error: { message: "upstream exploded" } });
    if (behavior === "rate-limited") return json(429, { error: { message: "slow down" } }, { "retry-after": "30" });
    if (behavior === "bad-request") return json(400, { error: { message: "cannot decode audio" } });
    if (behavior === "overloaded") return json(529, { error: { message: "overloaded" } });
    if (behavior === "stall") return;
    if (path.includes("/audio/transcriptions") || path.includes("/listen")) {
      const audio = files[0]?.bytes ?? raw;
      return json(200, transcription(path, fields, audio.length, wavSeconds(audio), behavior));
    }
    if (fields.stream === true || fields.stream === "true") return streamImages(res, path.includes("/edits"), behavior);
    return json(200, imageAnswer(path, fields, behavior));
  });
  const listening = await listenLocal(server);
  fake.baseUrl = listening.baseUrl;
  fake.stop = listening.stop;
  return fake;
}
