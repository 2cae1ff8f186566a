import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeAudio } from "./support/fake-speech.js";
import { recorded, savePreset, speak, startMediaFixture, type MediaFixture } from "./support/media-fixture.js";

let m: MediaFixture;
let openai: OpenAI;
let wav: Buffer;
const presets: Record<string, string> = {};

beforeAll(async () => {
  m = await startMediaFixture();
  openai = new OpenAI({ apiKey: m.key, baseURL: m.gw.apiUrl, maxRetries: 0 });
  wav = await speak("Presets and fallbacks.");
  const saved: Record<string, Record<string, unknown>> = {
    "tts-ignored": { model: "openai/tts-1", provider: { ignore: ["voices"] } },
    "tts-second": { model: "tts/pair", provider: { only: ["voices-compat"] }, session_id: "preset-session" },
    "tts-warm": { model: "openai/tts-1", temperature: 0.3 },
    "tts-fallback": { model: "tts/failing", models: ["openai/tts-1"] },
    "img-ignored": { model: "openai/gpt-image-1", provider: { ignore: ["pixels"] } },
    "img-second": { model: "img/pair", provider: { only: ["gem"] } },
    "img-warm": { model: "openai/gpt-image-1", temperature: 0.3 },
    "stt-ignored": { model: "openai/whisper-1", provider: { ignore: ["whisper"] } },
    "stt-second": { model: "stt/pair", provider: { only: ["dg"] } },
    "stt-warm": { model: "openai/whisper-1", temperature: 0.3 },
    "stt-warm-deepgram": { model: "stt/deepgram", temperature: 0.3 },
  };
  for (const [slug, config] of Object.entries(saved)) presets[slug] = await savePreset(m.gw, slug, config);
});
afterAll(() => m.stop());

const speech = (body: Record<string, unknown>) =>
  fetch(`${m.gw.apiUrl}/audio/speech`, { method: "POST", headers: { authorization: `Bearer ${m.key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
const image = (body: Record<string, unknown>) => m.gw.call("POST", "/images", { key: m.key, body: { prompt: "a kite", ...body } });
const transcribe = (body: Record<string, unknown>) =>
  m.gw.call("POST", "/audio/transcriptions", { key: m.key, body: { input_audio: { data: wav.toString("base64"), format: "wav" }, ...body } });
const errorOf = async (res: Response) => ((await res.json()) as { error: { message: string } }).error.message;

describe("@preset/<slug> on speech", () => {
  it("applies the preset's provider.ignore: with its only provider ignored there is no endpoint (404, as chat)", async () => {
    const before = m.speech.requests.length;
    const res = await speech({ model: "@preset/tts-ignored", input: "Hello", voice: "alloy" });
    expect(res.status).toBe(404);
    expect(await errorOf(res)).toMatch(/voices: in provider\.ignore/);
    expect(m.speech.requests.length).toBe(before);
  });

  it("applies the preset's provider.only and session_id, records the preset, and lets the request's own provider win", async () => {
    const before = m.speech.requests.length;
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await speech({ model: "@preset/tts-second", input: "Second", voice: "alloy" });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(fakeAudio)).toBe(true);
      ids.push(String(res.headers.get("x-generation-id")));
    }
    expect(m.speech.requests.slice(before).map((r) => r.headers.authorization)).toEqual(Array(8).fill("Bearer sk-compat"));
    expect(await recorded(m.gw, m.key, ids[0]!)).toMatchObject({ model: "tts/pair", provider_name: "voices-compat", preset_id: presets["tts-second"], session_id: "preset-session" });
    const own = await speech({ model: "@preset/tts-second", input: "Mine", voice: "alloy", provider: { only: ["voices"] } });
    expect(own.status).toBe(200);
    await own.arrayBuffer();
    expect(m.speech.requests.at(-1)!.headers.authorization).toBe("Bearer sk-voices");
  });

  it("refuses a preset that sets a field speech does not take, before a provider is called", async () => {
    const before = m.speech.requests.length;
    const res = await speech({ model: "@preset/tts-warm", input: "Hello", voice: "alloy" });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatch(/preset tts-warm sets temperature, which \/audio\/speech does not take/);
    expect(m.speech.requests.length).toBe(before);
  });
});

describe("@preset/<slug> on images", () => {
  it("applies the preset's provider.ignore (404) and provider.only, and records the preset", async () => {
    const ignored = await image({ model: "@preset/img-ignored" });
    expect(ignored.status).toBe(404);
    expect(ignored.body.error?.message).toMatch(/pixels: in provider\.ignore/);
    const before = m.fake.requests.length;
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await image({ model: "@preset/img-second" });
      expect(res.status).toBe(200);
      ids.push(String(res.headers.get("x-generation-id")));
    }
    expect(m.fake.requests.slice(before).every((r) => r.path.includes(":generateContent"))).toBe(true);
    expect(await recorded(m.gw, m.key, ids[0]!)).toMatchObject({ model: "img/pair", provider_name: "gem", preset_id: presets["img-second"] });
  });

  it("refuses a preset that sets temperature", async () => {
    const res = await image({ model: "@preset/img-warm" });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/preset img-warm sets temperature, which \/images does not take/);
  });
});

describe("@preset/<slug> on transcription", () => {
  it("applies the preset's provider.ignore (404) and provider.only, and records the preset", async () => {
    expect((await transcribe({ model: "@preset/stt-ignored" })).status).toBe(404);
    const before = m.fake.requests.length;
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await transcribe({ model: "@preset/stt-second" });
      expect(res.status).toBe(200);
      ids.push(String(res.headers.get("x-generation-id")));
    }
    expect(m.fake.requests.slice(before).every((r) => r.path.includes("/listen"))).toBe(true);
    expect(await recorded(m.gw, m.key, ids[0]!)).toMatchObject({ provider_name: "dg", preset_id: presets["stt-second"] });
  });

  it("sends the preset's temperature, by JSON and by the openai SDK's multipart form, and the request's wins", async () => {
    expect((await transcribe({ model: "@preset/stt-warm" })).status).toBe(200);
    expect(m.fake.requests.at(-1)!.fields.temperature).toBe("0.3");
    await openai.audio.transcriptions.create({ file: await toFile(wav, "speech.wav", { type: "audio/wav" }), model: "@preset/stt-warm" });
    expect(m.fake.requests.at(-1)!.fields.temperature).toBe("0.3");
    await openai.audio.transcriptions.create({ file: await toFile(wav, "speech.wav", { type: "audio/wav" }), model: "@preset/stt-warm", temperature: 0.1 });
    expect(m.fake.requests.at(-1)!.fields.temperature).toBe("0.1");
  });

  it("refuses a preset temperature where no endpoint can carry one", async () => {
    const before = m.fake.requests.length;
    const res = await transcribe({ model: "@preset/stt-warm-deepgram" });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/dg: no temperature support/);
    expect(m.fake.requests.length).toBe(before);
  });
});

describe("models: fallback models", () => {
  it("tries the next model on images when every endpoint of the first fails, and records the one that served", async () => {
    const res = await image({ model: "img/limited", models: ["openai/gpt-image-1"] });
    expect(res.status).toBe(200);
    expect(await recorded(m.gw, m.key, String(res.headers.get("x-generation-id")))).toMatchObject({ model: "openai/gpt-image-1", provider_name: "pixels" });
    const wrong = await image({ model: "openai/gpt-image-1", models: ["openai/whisper-1"] });
    expect(wrong.status).toBe(400);
    // Named by the field it came from: the fallback list's first entry.
    expect(wrong.body.error?.message).toBe("Invalid body: models[0]: openai/whisper-1 is not an image generation model");
    expect((await image({ models: ["nope"] })).body.error?.message).toMatch(/models\.0/);
  });

  it("tries the next model on transcription, by JSON and by the openai SDK's models[] form fields", async () => {
    const res = await transcribe({ model: "stt/failing", models: ["openai/whisper-1"] });
    expect(res.status).toBe(200);
    expect(await recorded(m.gw, m.key, String(res.headers.get("x-generation-id")))).toMatchObject({ model: "openai/whisper-1", provider_name: "whisper" });
    const viaSdk = await openai.audio.transcriptions.create({
      file: await toFile(wav, "speech.wav", { type: "audio/wav" }),
      model: "stt/failing",
      models: ["stt/deepgram"],
    } as OpenAI.Audio.TranscriptionCreateParamsNonStreaming);
    expect(viaSdk.text).toContain("Fake transcript");
    expect(m.fake.requests.at(-1)!.path).toMatch(/\/listen/);
  });

  it("tries the next model on speech before the first audio byte, also from a preset", async () => {
    for (const body of [{ model: "tts/failing", models: ["openai/tts-1"] }, { model: "@preset/tts-fallback" }]) {
      const res = await speech({ ...body, input: "Fall over", voice: "alloy" });
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(fakeAudio)).toBe(true);
      expect(await recorded(m.gw, m.key, String(res.headers.get("x-generation-id")))).toMatchObject({ model: "openai/tts-1", provider_name: "voices" });
    }
  });
});
