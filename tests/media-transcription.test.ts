import { request as httpRequest } from "node:http";
import { OpenRouter } from "@openrouter/sdk";
import OpenAI, { toFile } from "openai";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { perSecond, speak, startMediaFixture, wavDuration, type MediaFixture } from "./support/media-fixture.js";

let m: MediaFixture;
let wav: Buffer;
let openai: OpenAI;
let sdk: OpenRouter;

beforeAll(async () => {
  m = await startMediaFixture();
  wav = await speak("Hello from Switchyard, the model gateway.");
  openai = new OpenAI({ apiKey: m.key, baseURL: m.gw.apiUrl, maxRetries: 0 });
  sdk = new OpenRouter({ apiKey: m.key, serverURL: m.gw.apiUrl, retryConfig: { strategy: "none" } });
});
afterAll(() => m.stop());

const transcribe = (body: Record<string, unknown>, key = m.key) => m.gw.call("POST", "/audio/transcriptions", { key, body });
const base64 = () => wav.toString("base64");
const lastRequest = () => m.fake.requests.at(-1)!;
/** Cost of the audio at the test price, as the gateway rounds it (to the millisecond). */
const costOf = (seconds: number) => (Math.ceil(seconds * 1000) * Number(perSecond)) / 1000;

describe("POST /audio/transcriptions", () => {
  it("takes a multipart upload from the openai SDK and forwards the same audio", async () => {
    const result = await openai.audio.transcriptions.create({ file: await toFile(wav, "speech.wav", { type: "audio/wav" }), model: "openai/whisper-1" });
    expect(result.text).toBe(`Fake transcript of ${wav.length} bytes`);
    const upstream = lastRequest();
    expect(upstream.path).toBe("/v1/audio/transcriptions");
    expect(upstream.headers.authorization).toBe("Bearer sk-whisper");
    expect(upstream.fields.model).toBe("ok");
    expect(upstream.files[0]!.bytes.equals(wav)).toBe(true);
    const usage = (result as unknown as { usage: { seconds: number; cost: number } }).usage;
    // The fake bills whole seconds, as OpenAI's duration usage does.
    expect(usage.seconds).toBe(Math.ceil(wavDuration(wav)));
    expect(usage.cost).toBeCloseTo(costOf(Math.ceil(wavDuration(wav))), 12);
  });

  it("takes base64 JSON from @openrouter/sdk, with verbose_json segments, words and an ISO language", async () => {
    const result = await sdk.stt.createTranscription({
      sttRequest: { model: "openai/whisper-1", inputAudio: { data: base64(), format: "wav" }, responseFormat: "verbose_json", timestampGranularities: ["word", "segment"] },
    });
    expect(result.text).toContain("Fake transcript");
    expect(result).toMatchObject({ language: "en", task: "transcribe" });
    expect(result.segments?.[0]).toMatchObject({ id: 0, start: 0 });
    expect(result.words?.[0]).toMatchObject({ word: "Fake" });
    expect(lastRequest().fields["timestamp_granularities[]"]).toEqual(["word", "segment"]);
    expect(lastRequest().fields.response_format).toBe("verbose_json");
  });

  it("takes the SDK's multipart variant, with language and temperature passed on", async () => {
    const result = await sdk.stt.createTranscriptionMultipart({
      requestBody: { file: { fileName: "speech.wav", content: new Uint8Array(wav) }, model: "openai/whisper-1", language: "en", temperature: 0.2 },
    });
    expect(result.usage?.cost).toBeGreaterThan(0);
    expect(lastRequest().fields).toMatchObject({ language: "en", temperature: "0.2", response_format: "json" });
  });

  it("passes a prompt to OpenAI-format endpoints, by multipart and JSON, and refuses it where none can take it", async () => {
    await openai.audio.transcriptions.create({ file: await toFile(wav, "speech.wav", { type: "audio/wav" }), model: "openai/whisper-1", prompt: "Switchyard, NATS" });
    expect(lastRequest().fields.prompt).toBe("Switchyard, NATS");
    expect((await transcribe({ model: "openai/whisper-1", input_audio: { data: base64(), format: "wav" }, prompt: "Gateway terms" })).status).toBe(200);
    expect(lastRequest().fields.prompt).toBe("Gateway terms");
    const before = m.fake.requests.length;
    const refused = await transcribe({ model: "stt/deepgram", input_audio: { data: base64(), format: "wav" }, prompt: "Gateway terms" });
    expect(refused.status).toBe(400);
    expect(refused.body.error?.message).toContain("no prompt support");
    expect(m.fake.requests.length).toBe(before);
  });

  it("runs the guardrails' content filters on the prompt: redacted before the provider, blocked before anything", async () => {
    const created = await m.gw.call("POST", "/keys", { body: { name: "filtered" } });
    const guardrail = await m.gw.call("POST", "/guardrails", {
      body: { name: "prompt filters", content_filter_builtins: [{ slug: "email", action: "redact" }, { slug: "ssn", action: "block" }] },
    });
    await m.gw.call("POST", `/guardrails/${guardrail.body.data?.id}/assignments/keys`, { body: { key_hashes: [created.body.data?.hash] } });
    const key = String(created.body.key);
    expect((await transcribe({ model: "openai/whisper-1", input_audio: { data: base64(), format: "wav" }, prompt: "Mail ada@example.org" }, key)).status).toBe(200);
    expect(lastRequest().fields.prompt).toBe("Mail [EMAIL]");
    const before = m.fake.requests.length;
    const blocked = await transcribe({ model: "openai/whisper-1", input_audio: { data: base64(), format: "wav" }, prompt: "SSN 123-45-6789" }, key);
    expect(blocked.status).toBe(403);
    expect(m.fake.requests.length).toBe(before);
  });

  it.skipIf(!process.env.DATABASE_URL)("records the request's user on the generation (no transcription API takes one)", async () => {
    const res = await transcribe({ model: "openai/whisper-1", input_audio: { data: base64(), format: "wav" }, user: "listener-7" });
    expect(res.status).toBe(200);
    expect(JSON.stringify(lastRequest().fields)).not.toContain("listener-7");
    const id = String(res.headers.get("x-generation-id"));
    const client = new pg.Client({ connectionString: m.gw.databaseUrl });
    await client.connect();
    try {
      const read = async () => (await client.query<{ external_user: string }>(`SELECT external_user FROM media.generations WHERE id = $1`, [id])).rows[0];
      await eventually(async () => (await read()) !== undefined, 5000);
      expect((await read())!.external_user).toBe("listener-7");
    } finally {
      await client.end();
    }
  });

  it("speaks Deepgram's wire format: raw audio, query options, Token auth", async () => {
    const res = await transcribe({ model: "stt/deepgram", input_audio: { data: base64(), format: "wav" }, language: "en", response_format: "verbose_json", timestamp_granularities: ["word"] });
    expect(res.status).toBe(200);
    const upstream = lastRequest();
    expect(upstream.path).toMatch(/^\/v1\/listen\?/);
    expect(new URL(upstream.path, "http://x").searchParams.get("language")).toBe("en");
    expect(upstream.headers.authorization).toBe("Token dg-secret");
    expect(upstream.raw.equals(wav)).toBe(true);
    expect(res.body.usage).toMatchObject({ seconds: Number(wavDuration(wav).toFixed(3)) });
    expect(res.body.words).toEqual([expect.objectContaining({ word: "Fake" })]);
  });

  it("falls back to the next provider when one fails, and charges what the provider reported", async () => {
    const res = await transcribe({ model: "stt/fallback", input_audio: { data: base64(), format: "wav" }, provider: { order: ["whisper", "dg"] } });
    expect(res.status).toBe(200);
    expect(lastRequest().path).toMatch(/\/listen/);
    expect(res.headers.get("x-generation-id")).toMatch(/^gen-/);
  });

  it("charges the audio's length and estimated tokens when the provider reports no usage", async () => {
    const res = await transcribe({ model: "stt/nousage", input_audio: { data: base64(), format: "wav" } });
    expect(res.status).toBe(200);
    const usage = res.body.usage as { seconds: number; cost: number; output_tokens: number };
    expect(usage.seconds).toBeCloseTo(wavDuration(wav), 3);
    expect(usage.cost).toBeGreaterThan(0);
  });

  it("prices token-billed models by their tokens", async () => {
    const res = await transcribe({ model: "stt/tokens", input_audio: { data: base64(), format: "wav" } });
    expect(res.status).toBe(200);
    expect(res.body.usage).toMatchObject({ input_tokens: 120, output_tokens: 12, total_tokens: 132 });
    // Audio tokens at the audio price, transcript tokens at the completion price.
    expect((res.body.usage as { cost: number }).cost).toBeCloseTo(120 * 0.000006 + 12 * 0.00001, 12);
  });

  it("charges the key through the ledger", async () => {
    const created = await m.gw.call("POST", "/keys", { body: { name: "ledger" } });
    const key = String(created.body.key);
    const hash = String((created.body.data as Record<string, unknown>).hash);
    const res = await transcribe({ model: "openai/whisper-1", input_audio: { data: base64(), format: "wav" } }, key);
    const cost = (res.body.usage as { cost: number }).cost;
    await eventually(async () => Number((await m.gw.call("GET", `/keys/${hash}`)).body.data?.usage) === cost, 5000);
  });
});

describe("invalid transcription requests", () => {
  const body = () => ({ model: "openai/whisper-1", input_audio: { data: base64(), format: "wav" } });
  it.each([
    ["invalid base64", { input_audio: { data: "not base64!!", format: "wav" } }, /input_audio.data: must be base64/],
    ["an unknown format", { input_audio: { data: "", format: "wav" } }, /input_audio.data/],
    ["a language that is not ISO-639-1", { language: "english" }, /language/],
    ["an unassigned language code", { language: "qq" }, /qq is not an ISO-639-1 language code/],
    ["a bad response_format", { response_format: "srt" }, /response_format/],
    ["a negative temperature", { temperature: -1 }, /temperature/],
    ["a chat model", { model: "vendor/chat" }, /vendor\/chat is not a transcription model/],
  ])("refuses %s with 400", async (_what, patch, message) => {
    const res = await transcribe({ ...body(), ...patch });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(message);
  });

  it("refuses audio in an unknown container, or not the container it claims to be", async () => {
    const unknown = await transcribe({ ...body(), input_audio: { data: base64(), format: "midi" } });
    expect(unknown.body.error?.message).toMatch(/unknown audio format midi/);
    const mismatch = await transcribe({ ...body(), input_audio: { data: base64(), format: "mp3" } });
    expect(mismatch.body.error?.message).toMatch(/is wav audio, not mp3/);
    const noise = await transcribe({ ...body(), input_audio: { data: Buffer.alloc(64, 7).toString("base64"), format: "wav" } });
    expect(noise.status).toBe(400);
    expect(noise.body.error?.message).toMatch(/not audio in a known container/);
  });

  it("refuses a multipart body without a file, and other content types", async () => {
    const form = new FormData();
    form.set("model", "openai/whisper-1");
    const res = await fetch(`${m.gw.apiUrl}/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${m.key}` }, body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/file: an audio file part is required/);
    const text = await fetch(`${m.gw.apiUrl}/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${m.key}`, "content-type": "text/plain" }, body: "hello" });
    expect(text.status).toBe(400);
  });

  it("refuses a chat completion on a transcription model", async () => {
    const res = await m.gw.call("POST", "/chat/completions", { key: m.key, body: { model: "openai/whisper-1", messages: [{ role: "user", content: "hi" }] } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/openai\/whisper-1 is not a chat model \(it outputs transcription\)/);
  });

  it("answers 401 without a key, 403 for a management key, 404 for an unknown model", async () => {
    expect((await transcribe(body(), null as unknown as string)).status).toBe(401);
    expect((await m.gw.call("POST", "/audio/transcriptions", { body: body() })).status).toBe(403);
    expect((await transcribe({ ...body(), model: "nobody/nothing" })).status).toBe(404);
  });

  it("refuses base64 audio over the size limit with 413", async () => {
    const big = Buffer.concat([wav, Buffer.alloc(400_000)]);
    const res = await transcribe({ model: "openai/whisper-1", input_audio: { data: big.toString("base64"), format: "wav" } });
    expect(res.status).toBe(413);
  });

  it("refuses an oversize upload with 413 while it is still arriving", async () => {
    const boundary = "switchyardboundary";
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nopenai/whisper-1\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\nContent-Type: audio/wav\r\n\r\n`;
    const { status, sentWhenAnswered } = await new Promise<{ status: number; sentWhenAnswered: number }>((resolve, reject) => {
      let sent = 0;
      const req = httpRequest(`${m.gw.apiUrl}/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${m.key}`, "content-type": `multipart/form-data; boundary=${boundary}` } });
      req.on("response", (res) => {
        resolve({ status: res.statusCode ?? 0, sentWhenAnswered: sent });
        res.resume();
        req.destroy();
      });
      req.on("error", (error) => (sent > 0 ? undefined : reject(error)));
      req.write(head);
      req.write(wav.subarray(0, 44));
      // 20 MB offered, 64 KB at a time; the gateway must answer long before the end.
      const chunk = Buffer.alloc(65_536, 1);
      const pump = () => {
        if (req.destroyed || sent > 20_000_000) return;
        sent += chunk.length;
        if (req.write(chunk)) setImmediate(pump);
        else req.once("drain", pump);
      };
      pump();
    });
    expect(status).toBe(413);
    expect(sentWhenAnswered).toBeLessThan(5_000_000);
  });
});

describe("provider failures", () => {
  const body = (model: string) => ({ model, input_audio: { data: base64(), format: "wav" } });
  it.each([
    ["stt/limited", 429],
    ["stt/failing", 502],
    ["stt/bad", 400],
    ["stt/overloaded", 529],
    ["stt/stall", 524],
  ])("%s answers %i", async (model, status) => {
    const res = await transcribe(body(model));
    expect(res.status).toBe(status);
    expect(res.body.error?.code).toBe(status);
  });

  it("answers 402 before any provider is called when the key's limit cannot cover the audio", async () => {
    const created = await m.gw.call("POST", "/keys", { body: { name: "tight", limit: 0.0001 } });
    const key = String(created.body.key);
    const before = m.fake.requests.length;
    const refused = await transcribe(body("openai/whisper-1"), key);
    expect(refused.status).toBe(402);
    expect(refused.body.error?.message).toMatch(/can cost up to \$0\.000\d+, but only \$0\.0001 remains/);
    expect(refused.body.error).toMatchObject({ metadata: { limited_by: "key", remaining_usd: 0.0001 } });
    expect(m.fake.requests.length).toBe(before);
  });
});
