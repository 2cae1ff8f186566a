import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { perCharacter, perImage, perSecond, recorded, speak, startMediaFixture, wavDuration, type MediaFixture } from "./support/media-fixture.js";

let m: MediaFixture;
let openai: OpenAI;
let wav: Buffer;

beforeAll(async () => {
  m = await startMediaFixture();
  openai = new OpenAI({ apiKey: m.key, baseURL: m.gw.apiUrl, maxRetries: 0 });
  wav = await speak("Who asked, and who left.");
});
afterAll(() => m.stop());

const audio = () => ({ data: wav.toString("base64"), format: "wav" });
const post = (path: string, body: Record<string, unknown>, key = m.key, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${m.gw.apiUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
const errorOf = async (res: Response) => ((await res.json()) as { error: { message: string } }).error.message;

async function newKey(): Promise<{ key: string; hash: string }> {
  const created = await m.gw.call("POST", "/keys", { body: { name: "records" } });
  return { key: String(created.body.key), hash: String(created.body.data?.hash) };
}
const usageOf = async (hash: string) => Number((await m.gw.call("GET", `/keys/${hash}`)).body.data?.usage);

/** The calls of each route the tests below make, with the fake that serves them. */
const routes = [
  { path: "/audio/speech", body: { model: "openai/tts-1", input: "Who is asking?", voice: "alloy" } },
  { path: "/images", body: { model: "openai/gpt-image-1", prompt: "a kite" } },
  { path: "/audio/transcriptions", body: { model: "openai/whisper-1" } },
] as const;
const bodyOf = (route: (typeof routes)[number]) => (route.path === "/audio/transcriptions" ? { ...route.body, input_audio: audio() } : { ...route.body });

describe("who asked, on media generations", () => {
  it.each(routes)("$path records the session, referer, app title and user agent, as GET /generation shows them", async (route) => {
    const headers = { "HTTP-Referer": "https://app.example.com/studio", "X-Title": "Studio", "User-Agent": `studio/1.0 ${"x".repeat(1200)}`, "x-session-id": "header-session" };
    const res = await post(route.path, bodyOf(route), m.key, headers);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const generation = await recorded(m.gw, m.key, String(res.headers.get("x-generation-id")));
    expect(generation).toMatchObject({
      session_id: "header-session",
      http_referer: "https://app.example.com/studio",
      origin: "https://app.example.com",
      app_title: "Studio",
    });
    expect(typeof generation.app_id).toBe("number");
    // Headers are kept to 1000 characters.
    expect(generation.user_agent).toBe(headers["User-Agent"].slice(0, 1000));
    // The body's session_id wins over the header; X-OpenRouter-Title names the app too.
    const own = await post(route.path, { ...bodyOf(route), session_id: "body-session" }, m.key, { "x-session-id": "header-session", "X-OpenRouter-Title": "Other" });
    await own.arrayBuffer();
    expect(await recorded(m.gw, m.key, String(own.headers.get("x-generation-id")))).toMatchObject({ session_id: "body-session", app_title: "Other", preset_id: null });
  });
});

/** Sends a request, waits until the provider has it, and hangs up before an answer. */
async function leave(path: string, body: Record<string, unknown>, key: string, seen: () => number): Promise<void> {
  const abort = new AbortController();
  const before = seen();
  const pending = post(path, body, key, {}, abort.signal).catch(() => undefined);
  await eventually(async () => seen() > before, 5000);
  abort.abort();
  await pending;
}

/** The key's only generation, once its charge is recorded. */
async function onlyGeneration(hash: string): Promise<Record<string, unknown>> {
  const list = async () => (await m.gw.call("GET", `/generations?api_key_hash=${hash}`)).body.data ?? [];
  await eventually(async () => (await list()).length === 1, 5000);
  return (await list())[0]!;
}

describe("a client that leaves while the provider works", () => {
  const cases = [
    ["speech", "/audio/speech", { model: "tts/stall", input: "Nobody listens", voice: "alloy" }, "Nobody listens".length * Number(perCharacter)],
    ["an image", "/images", { model: "img/stall", prompt: "a kite", n: 2 }, 2 * Number(perImage)],
    ["a transcription", "/audio/transcriptions", { model: "stt/stall" }, 0],
  ] as const;

  it.each(cases)("leaves %s recorded as cancelled and charged what the provider was asked to make", async (_what, path, body, cost) => {
    const { key, hash } = await newKey();
    const expected = path === "/audio/transcriptions" ? (Math.ceil(wavDuration(wav) * 1000) * Number(perSecond)) / 1000 : cost;
    await leave(path, path === "/audio/transcriptions" ? { ...body, input_audio: audio() } : body, key, () => m.fake.requests.length);
    const row = await onlyGeneration(hash);
    expect(row).toMatchObject({ status: "cancelled" });
    await eventually(async () => Math.abs((await usageOf(hash)) - expected) < 1e-12, 5000);
    expect(await recorded(m.gw, key, String(row.id))).toMatchObject({ cancelled: true, streamed: path !== "/audio/transcriptions" && path !== "/images" });
  });
});

describe("fields the media routes do not handle", () => {
  it.each([
    ["/images", { model: "openai/gpt-image-1", prompt: "x", response_format: "url" }, /response_format: only b64_json/],
    ["/images", { model: "openai/gpt-image-1", prompt: "x", style: "vivid" }, /unknown field style/],
    ["/images", { model: "openai/gpt-image-1", prompt: "x", style: "vivid", partial_images: 2 }, /unknown fields style, partial_images/],
    ["/audio/transcriptions", { model: "openai/whisper-1", stream: true }, /stream: streamed transcription is not supported/],
    ["/audio/transcriptions", { model: "openai/whisper-1", chunking_strategy: "auto" }, /unknown field chunking_strategy/],
  ])("%s refuses %j with 400 before a provider is called", async (path, body, message) => {
    const before = m.fake.requests.length;
    const res = await post(path, path === "/audio/transcriptions" ? { ...body, input_audio: audio() } : body);
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatch(message);
    expect(m.fake.requests.length).toBe(before);
  });

  it("takes what the openai SDK sends that the gateway honours: b64_json images, stream false", async () => {
    const images = await openai.images.generate({ model: "openai/gpt-image-1", prompt: "x", response_format: "b64_json" });
    expect(images.data?.[0]?.b64_json).toBeTruthy();
    const file = await toFile(wav, "speech.wav", { type: "audio/wav" });
    expect((await openai.audio.transcriptions.create({ file, model: "openai/whisper-1", stream: false })).text).toContain("Fake transcript");
  });

  it("refuses the openai SDK's multipart fields the gateway cannot honour, naming them", async () => {
    const file = async () => toFile(wav, "speech.wav", { type: "audio/wav" });
    const before = m.fake.requests.length;
    await expect(openai.audio.transcriptions.create({ file: await file(), model: "openai/whisper-1", include: ["logprobs"] })).rejects.toThrow(/unknown field include\[\]/);
    await expect(openai.audio.transcriptions.create({ file: await file(), model: "openai/whisper-1", stream: true })).rejects.toThrow(/stream: streamed transcription is not supported/);
    expect(m.fake.requests.length).toBe(before);
  });
});

describe("transcription temperature", () => {
  it("leaves out endpoints whose wire has no temperature (Deepgram), and refuses it where none remains", async () => {
    const before = m.fake.requests.length;
    const refused = await post("/audio/transcriptions", { model: "stt/deepgram", input_audio: audio(), temperature: 0.2 });
    expect(refused.status).toBe(400);
    expect(await errorOf(refused)).toMatch(/stt\/deepgram cannot serve this request: dg: no temperature support/);
    expect(m.fake.requests.length).toBe(before);
    for (let i = 0; i < 6; i++) {
      const res = await post("/audio/transcriptions", { model: "stt/pair", input_audio: audio(), temperature: 0.2 });
      expect(res.status).toBe(200);
      expect(m.fake.requests.at(-1)!.fields.temperature).toBe("0.2");
    }
  });
});
