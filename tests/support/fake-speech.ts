import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenLocal } from "./listen.js";

/**
 * How the fake answers, picked by the upstream model name: `ok` sends the audio as the body; `tokens` sends
 * it as `speech.audio.*` events with usage when asked for `stream_format: sse` (`no-usage`: without);
 * `gated` sends its first chunk and the rest only once the test calls `release`; `cut` drops the
 * connection after its first chunk; `fail-500` fails before any audio.
 */
export type SpeechBehavior = "ok" | "tokens" | "no-usage" | "gated" | "cut" | "fail-500";

export interface SpeechRequestSeen {
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

export interface FakeSpeechProvider {
  baseUrl: string;
  requests: SpeechRequestSeen[];
  /** Answers whose client went away before they ended. */
  aborted: number;
  /** Lets the waiting `gated` answer send the rest of its audio. */
  release(): void;
  stop(): Promise<void>;
}

const chunkBytes = 16_384;

/** The audio every answer sends, in three chunks: bytes a test can compare exactly. */
export const fakeAudio = Buffer.from(Array.from({ length: 3 * chunkBytes }, (_, i) => (i * 7 + (i >> 8)) % 256));
const chunks = [0, 1, 2].map((i) => fakeAudio.subarray(i * chunkBytes, (i + 1) * chunkBytes));

/** The usage `tokens` reports at the end of its events. */
export const fakeSpeechUsage = { input_tokens: 30, output_tokens: 500, total_tokens: 530 };

/** What OpenAI answers each format with. */
const contentTypes: Record<string, string> = { mp3: "audio/mpeg", opus: "audio/opus", aac: "audio/aac", flac: "audio/flac", wav: "audio/wav", pcm: "audio/pcm" };

async function read(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(parts).toString("utf8")) as Record<string, unknown>;
}

/** Writes and resolves once the bytes have left, so what follows happens after the client could see them. */
const send = (res: ServerResponse, data: Buffer | string) => new Promise<void>((resolve) => res.write(data, () => resolve()));

function events(res: ServerResponse, usage: boolean): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const chunk of chunks) res.write(`data: ${JSON.stringify({ type: "speech.audio.delta", audio: chunk.toString("base64") })}\n\n`);
  res.end(`data: ${JSON.stringify({ type: "speech.audio.done", ...(usage ? { usage: fakeSpeechUsage } : {}) })}\n\n`);
}

/** An OpenAI-style `/audio/speech` server. */
export async function startFakeSpeechProvider(): Promise<FakeSpeechProvider> {
  let open: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => (open = resolve));
  const fake: FakeSpeechProvider = {
    baseUrl: "",
    requests: [],
    aborted: 0,
    release() {
      open();
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    stop: async () => {},
  };
  const server = createServer(async (req, res) => {
    const body = await read(req);
    fake.requests.push({ path: req.url ?? "", headers: req.headers, body });
    res.on("close", () => {
      if (!res.writableFinished) fake.aborted++;
    });
    const behavior = String(body.model) as SpeechBehavior;
    if (behavior === "fail-500") return void res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "upstream exploded" } }));
    if ((behavior === "tokens" || behavior === "no-usage") && body.stream_format === "sse") return events(res, behavior === "tokens");
    res.writeHead(200, { "content-type": contentTypes[String(body.response_format ?? "mp3")] ?? "application/octet-stream" });
    await send(res, chunks[0]!);
    if (behavior === "cut") return void setTimeout(() => res.socket?.destroy(), 20);
    if (behavior === "gated") await gate;
    if (res.destroyed) return;
    for (const chunk of chunks.slice(1)) res.write(chunk);
    res.end();
  });
  const listening = await listenLocal(server);
  fake.baseUrl = listening.baseUrl;
  fake.stop = listening.stop;
  return fake;
}
