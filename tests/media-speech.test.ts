import { createWriteStream } from "node:fs";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { OpenRouter } from "@openrouter/sdk";
import OpenAI from "openai";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { fakeAudio, fakeSpeechUsage } from "./support/fake-speech.js";
import { perCharacter, speechTokenPricing, startMediaFixture, type MediaFixture } from "./support/media-fixture.js";

let m: MediaFixture;
let openai: OpenAI;
let sdk: OpenRouter;
/** The gateway's own database, where media's generation records can be read (not with embedded PGlite). */
let db: pg.Client | undefined;

beforeAll(async () => {
  m = await startMediaFixture();
  openai = new OpenAI({ apiKey: m.key, baseURL: m.gw.apiUrl, maxRetries: 0 });
  sdk = new OpenRouter({ apiKey: m.key, serverURL: m.gw.apiUrl, retryConfig: { strategy: "none" } });
  if (m.gw.databaseUrl) {
    db = new pg.Client({ connectionString: m.gw.databaseUrl });
    await db.connect();
  }
});
afterAll(async () => {
  await db?.end();
  await m.stop();
});

const speak = (body: Record<string, unknown>, key = m.key, signal?: AbortSignal) =>
  fetch(`${m.gw.apiUrl}/audio/speech`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
const lastRequest = () => m.speech.requests.at(-1)!;
const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());
/** Speaks and reads the whole answer; the generation's id. */
const spoken = async (body: Record<string, unknown>, key = m.key) => {
  const res = await speak(body, key);
  await bytesOf(res);
  return String(res.headers.get("x-generation-id"));
};

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of Readable.fromWeb(stream as NodeReadableStream<Uint8Array>)) chunks.push(chunk as Uint8Array);
  return Buffer.concat(chunks);
}

/** Rejects when `promise` has not settled within `ms`: audio must not wait for the provider's last byte. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

async function newKey(body: Record<string, unknown> = {}): Promise<{ key: string; hash: string }> {
  const created = await m.gw.call("POST", "/keys", { body: { name: "speech", ...body } });
  return { key: String(created.body.key), hash: String(created.body.data?.hash) };
}
const usageOf = async (hash: string) => Number((await m.gw.call("GET", `/keys/${hash}`)).body.data?.usage);
const charged = (hash: string, cost: number) => eventually(async () => Math.abs((await usageOf(hash)) - cost) < 1e-12, 5000);
/** A key whose guardrail redacts e-mail addresses and blocks social security numbers. */
async function filteredKey(): Promise<string> {
  const { key, hash } = await newKey();
  const guardrail = await m.gw.call("POST", "/guardrails", {
    body: { name: "speech filters", content_filter_builtins: [{ slug: "email", action: "redact" }, { slug: "ssn", action: "block" }] },
  });
  await m.gw.call("POST", `/guardrails/${guardrail.body.data?.id}/assignments/keys`, { body: { key_hashes: [hash] } });
  return key;
}
const mailing = { model: "openai/gpt-4o-mini-tts", input: "Mail ada@example.org", instructions: "Greet bob@example.com" };

/** Starts a `gated` generation, reads its first chunk and hangs up; resolves once the provider saw its connection close. */
async function hangUp(): Promise<Response> {
  const abort = new AbortController();
  const aborted = m.speech.aborted;
  const res = await speak({ model: "tts/gated", input: "Going away", voice: "alloy" }, m.key, abort.signal);
  expect((await res.body!.getReader().read()).done).toBe(false);
  abort.abort();
  await eventually(async () => m.speech.aborted > aborted, 5000);
  m.speech.release();
  return res;
}

interface GenerationRow {
  kind: string;
  status: string;
  streamed: boolean;
  characters: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  usage_estimated: boolean;
  cost_usd: string;
  content_filters: unknown;
}

async function generation(id: string, status = "completed"): Promise<GenerationRow> {
  const read = async () => (await db!.query<GenerationRow>(`SELECT * FROM media.generations WHERE id = $1`, [id])).rows[0];
  await eventually(async () => (await read())?.status === status, 5000);
  return (await read())!;
}

describe("POST /audio/speech", () => {
  it("streams the openai SDK's audio as the provider sends it, byte for byte into a file", async () => {
    const response = await openai.audio.speech.create({ model: "tts/gated", voice: "alloy", input: "Hello from Switchyard." });
    expect(response.headers.get("content-type")).toBe("audio/mpeg");
    expect(response.headers.get("x-generation-id")).toMatch(/^gen-/);
    const reader = response.body!.getReader();
    // The provider holds back the rest of its audio until this first chunk has reached the client.
    const first = await within(reader.read(), 5000, "no audio reached the client before the provider finished");
    expect(first.value!.length).toBeGreaterThan(0);
    m.speech.release();
    const file = join(await mkdtemp(join(tmpdir(), "switchyard-speech-")), "speech.mp3");
    async function* rest() {
      yield first.value!;
      for (let next = await reader.read(); !next.done; next = await reader.read()) yield next.value;
    }
    await pipeline(Readable.from(rest()), createWriteStream(file));
    expect((await readFile(file)).equals(fakeAudio)).toBe(true);
  });

  it("passes @openrouter/sdk validation: its default pcm comes back as audio/pcm", async () => {
    const stream = await sdk.tts.createSpeech({ speechRequest: { model: "openai/tts-1", input: "Hi there", voice: "nova" } });
    expect((await readAll(stream)).equals(fakeAudio)).toBe(true);
    expect(lastRequest().body).toMatchObject({ response_format: "pcm", voice: "nova" });
  });

  it("answers each format with its content type", async () => {
    const types = { mp3: "audio/mpeg", opus: "audio/opus", aac: "audio/aac", flac: "audio/flac", wav: "audio/wav", pcm: "audio/pcm" };
    for (const [format, type] of Object.entries(types)) {
      const res = await speak({ model: "openai/tts-1", input: "One format", voice: "echo", response_format: format });
      expect(res.status, format).toBe(200);
      expect(res.headers.get("content-type"), format).toBe(type);
      expect((await bytesOf(res)).equals(fakeAudio), format).toBe(true);
      expect(lastRequest().body.response_format).toBe(format);
    }
  });

  it("sends a character-priced endpoint the request's fields, and no instructions or events", async () => {
    const res = await speak({ model: "openai/tts-1", input: "Exactly this.", voice: "nova", response_format: "wav", speed: 1.5, user: "listener-7" });
    expect(res.status).toBe(200);
    await bytesOf(res);
    const upstream = lastRequest();
    expect(upstream.path).toBe("/v1/audio/speech");
    expect(upstream.headers.authorization).toBe("Bearer sk-voices");
    expect(upstream.body).toEqual({ model: "ok", input: "Exactly this.", voice: "nova", response_format: "wav", speed: 1.5 });
  });

  it("asks a token-priced endpoint for events, with instructions, alloy by default and the provider's options", async () => {
    const res = await speak({
      model: "openai/gpt-4o-mini-tts",
      input: "Read this warmly.",
      instructions: "Warm and slow.",
      provider: { options: { voices: { seed: 7, model: "not-this" }, elsewhere: { nope: true } } },
    });
    expect(res.headers.get("content-type")).toBe("audio/mpeg");
    expect((await bytesOf(res)).equals(fakeAudio)).toBe(true);
    expect(lastRequest().body).toEqual({
      model: "tokens",
      input: "Read this warmly.",
      voice: "alloy",
      response_format: "mp3",
      instructions: "Warm and slow.",
      stream_format: "sse",
      seed: 7,
    });
  });

  it("falls back past an endpoint that fails before its first audio byte", async () => {
    const before = m.speech.requests.length;
    const res = await speak({ model: "tts/fallback", input: "Fall back", voice: "alloy", provider: { order: ["voices", "voices-compat"] } });
    expect(res.status).toBe(200);
    expect((await bytesOf(res)).equals(fakeAudio)).toBe(true);
    const [failed, served] = m.speech.requests.slice(before);
    expect(failed!.body.model).toBe("fail-500");
    expect(served!.headers.authorization).toBe("Bearer sk-compat");
  });
});

describe("invalid speech requests", () => {
  const body = { model: "openai/tts-1", input: "Hello", voice: "alloy" };
  it.each([
    ["empty input", { input: "" }, /input: must not be empty/],
    ["a field no endpoint takes", { temperature: 0.5 }, /temperature/],
    ["input over 4096 characters", { input: "a".repeat(4097) }, /input: must be at most 4096 characters/],
    ["an unknown format", { response_format: "ogg" }, /response_format/],
    ["a speed above 4", { speed: 4.5 }, /speed/],
    ["a speed below 0.25", { speed: 0.1 }, /speed/],
    ["voice cloning", { input_references: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }, /voice cloning is not supported/],
    ["stream_format sse", { stream_format: "sse" }, /stream_format: only audio is supported/],
    ["instructions for an endpoint without them", { instructions: "Whisper" }, /openai\/tts-1 cannot serve this request: voices: takes no instructions/],
    ["speed for a model that ignores it", { model: "openai/gpt-4o-mini-tts", speed: 1.5 }, /openai\/gpt-4o-mini-tts cannot serve this request: voices: takes no speed/],
    ["a model that does not speak", { model: "vendor/chat" }, /vendor\/chat is not a text-to-speech model/],
  ])("refuses %s with 400 before a provider is called", async (_what, patch, message) => {
    const before = m.speech.requests.length;
    const res = await speak({ ...body, ...patch });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(message);
    expect(m.speech.requests.length).toBe(before);
  });

  it("counts characters, not UTF-16 units: 4096 emoji are within the limit", async () => {
    const res = await speak({ ...body, input: "😀".repeat(4096) });
    expect(res.status).toBe(200);
    await bytesOf(res);
  });

  it("answers 402 before a provider is called when the key's limit cannot cover the worst case", async () => {
    const { key } = await newKey({ limit: 0.0001 });
    const before = m.speech.requests.length;
    const res = await speak({ ...body, input: "x".repeat(100) }, key);
    expect(res.status).toBe(402);
    const error = ((await res.json()) as { error: { message: string } }).error;
    expect(error.message).toMatch(/can cost up to \$0\.0015, but only \$0\.0001 remains/);
    expect(m.speech.requests.length).toBe(before);
  });
});

describe("speech charges", () => {
  const tokenCost = (input: number, output: number) => input * Number(speechTokenPricing.prompt) + output * Number(speechTokenPricing.audio_output);

  it("charges a character-priced endpoint the characters spoken, exactly", async () => {
    const { key, hash } = await newKey();
    const input = "Grüße 😀 aus Berlin";
    await bytesOf(await speak({ model: "openai/tts-1", input, voice: "alloy" }, key));
    await charged(hash, [...input].length * Number(perCharacter));
  });

  it("charges a token-priced endpoint the usage of its last event", async () => {
    const { key, hash } = await newKey();
    await bytesOf(await speak({ model: "openai/gpt-4o-mini-tts", input: "Tokens, please." }, key));
    await charged(hash, tokenCost(fakeSpeechUsage.input_tokens, fakeSpeechUsage.output_tokens));
  });

  it("estimates the tokens of a token-priced endpoint that reports none", async () => {
    const { key, hash } = await newKey();
    const res = await speak({ model: "tts/no-usage", input: "No usage here.", response_format: "pcm" }, key);
    expect((await bytesOf(res)).equals(fakeAudio)).toBe(true);
    // A quarter token a character of text; pcm is 48,000 bytes a second of audio, at about 21 audio tokens a second.
    await charged(hash, tokenCost(Math.ceil("No usage here.".length / 4), Math.ceil((fakeAudio.length / 48_000) * 21)));
  });

  it("runs the guardrails' content filters on the input and instructions: redacted before the provider, blocked before anything", async () => {
    const key = await filteredKey();
    const res = await speak(mailing, key);
    expect(res.status).toBe(200);
    await bytesOf(res);
    expect(lastRequest().body).toMatchObject({ input: "Mail [EMAIL]", instructions: "Greet [EMAIL]" });
    const before = m.speech.requests.length;
    const blocked = await speak({ model: "openai/tts-1", input: "SSN 123-45-6789", voice: "alloy" }, key);
    expect(blocked.status).toBe(403);
    expect(m.speech.requests.length).toBe(before);
  });

  it("cuts the response when the provider fails mid-stream, and charges the text", async () => {
    const { key, hash } = await newKey();
    const res = await speak({ model: "tts/cut", input: "Cut short", voice: "alloy" }, key);
    expect(res.status).toBe(200);
    await expect(res.arrayBuffer()).rejects.toThrow();
    await charged(hash, "Cut short".length * Number(perCharacter));
  });

  it("cancels the provider call when the client goes away mid-stream", async () => {
    const before = m.speech.aborted;
    await hangUp();
    expect(m.speech.aborted).toBe(before + 1);
  });
});

describe("speech generations", () => {
  it("are found by GET /generation, which @openrouter/sdk validates, within the caller's workspace", async () => {
    const { key, hash } = await newKey();
    const input = "Where did this go?";
    const id = await spoken({ model: "openai/tts-1", input, voice: "alloy" }, key);
    await charged(hash, [...input].length * Number(perCharacter));
    const record = (await new OpenRouter({ apiKey: key, serverURL: m.gw.apiUrl }).generations.getGeneration({ id })).data;
    expect(record).toMatchObject({ id, apiType: "tts", model: "openai/tts-1", providerName: "voices", streamed: true, cancelled: false, isByok: false });
    expect(record.totalCost).toBeCloseTo([...input].length * Number(perCharacter), 12);
    expect(record.providerResponses).toEqual([expect.objectContaining({ status: 200, providerName: "voices" })]);
    // Another workspace's key does not see it; the organization's management key does.
    const research = (await m.gw.call("POST", "/workspaces", { body: { name: "Elsewhere", slug: "speech-elsewhere" } })).body.data!;
    const outsider = String((await m.gw.call("POST", "/keys", { body: { name: "outsider", workspace_id: research.id } })).body.key);
    expect((await m.gw.call("GET", `/generation?id=${id}`, { key: outsider })).status).toBe(404);
    expect((await m.gw.call("GET", `/generation?id=${id}`)).body.data).toMatchObject({ id, api_type: "tts" });
  });
});

describe.runIf(testEnv.databaseUrl)("speech records", () => {
  it("keep the kind, characters, tokens, and whether the tokens were estimated", async () => {
    const input = "Grüße 😀 aus Berlin";
    const perCharacterRow = await generation(await spoken({ model: "openai/tts-1", input, voice: "alloy" }));
    expect(perCharacterRow).toMatchObject({ kind: "speech", streamed: true, characters: [...input].length, prompt_tokens: 0, completion_tokens: 0, usage_estimated: false });
    expect(Number(perCharacterRow.cost_usd)).toBeCloseTo([...input].length * Number(perCharacter), 12);
    const reported = await generation(await spoken({ model: "openai/gpt-4o-mini-tts", input: "Tokens" }));
    expect(reported).toMatchObject({ prompt_tokens: fakeSpeechUsage.input_tokens, completion_tokens: fakeSpeechUsage.output_tokens, usage_estimated: false });
    const estimated = await generation(await spoken({ model: "tts/no-usage", input: "Guess" }));
    expect(estimated).toMatchObject({ usage_estimated: true, characters: 5 });
  });

  it("keep what the content filters redacted", async () => {
    const row = await generation(await spoken(mailing, await filteredKey()));
    expect(row.content_filters).toEqual([expect.objectContaining({ filter: "email", action: "redact", count: 2 })]);
  });

  it("keep a stream cut by its provider as an error, and one its client left as cancelled", async () => {
    const cut = await speak({ model: "tts/cut", input: "Cut short", voice: "alloy" });
    await cut.arrayBuffer().catch(() => undefined);
    expect((await generation(String(cut.headers.get("x-generation-id")), "error")).characters).toBe("Cut short".length);
    const left = await hangUp();
    expect((await generation(String(left.headers.get("x-generation-id")), "cancelled")).characters).toBe("Going away".length);
  });
});

describe("the x-session-id header on /audio/speech", () => {
  it("refuses one longer than 256 characters with 400 naming it, before the provider is called", async () => {
    const before = m.speech.requests.length;
    const res = await fetch(`${m.gw.apiUrl}/audio/speech`, {
      method: "POST",
      headers: { authorization: `Bearer ${m.key}`, "content-type": "application/json", "x-session-id": "s".repeat(257) },
      body: JSON.stringify({ model: "openai/tts-1", input: "Hello", voice: "echo" }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("x-session-id");
    expect(m.speech.requests.length).toBe(before);
  });
});
