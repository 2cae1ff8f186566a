import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeMediaProvider, type FakeMediaProvider } from "./support/fake-media.js";
import { startFakeRetrieval, type FakeRetrieval } from "./support/fake-retrieval.js";
import { startFakeSpeechProvider, type FakeSpeechProvider } from "./support/fake-speech.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { tone } from "./support/media-fixture.js";

/**
 * Models billed in units other than tokens, each served by a dear endpoint (listed first) and a cheap one
 * of the same wire format: rerank per search unit, speech per character, transcription per second of audio.
 * The setup follows the retrieval and media fixtures, with two providers per wire format.
 */
const dearSearchUnit = 0.004;
const cheapSearchUnit = 0.001;
const dearCharacter = 0.00006;
const cheapCharacter = 0.000015;
const zero = { prompt: "0", completion: "0" };

let gw: TestGateway;
let retrieval: FakeRetrieval;
let speech: FakeSpeechProvider;
let media: FakeMediaProvider;
let key: string;

const secrets = { CO_DEAR_KEY: "co-dear", CO_CHEAP_KEY: "co-cheap", VOICES_DEAR_KEY: "voices-dear", VOICES_CHEAP_KEY: "voices-cheap", WHISPER_DEAR_KEY: "whisper-dear", WHISPER_CHEAP_KEY: "whisper-cheap" };

beforeAll(async () => {
  [retrieval, speech, media] = await Promise.all([startFakeRetrieval(), startFakeSpeechProvider(), startFakeMediaProvider()]);
  const provider = (slug: string, adapter: string, base_url: string) => ({ slug, name: slug, adapter, base_url, api_key_env: `${slug.toUpperCase().replace("-", "_")}_KEY` });
  const model = (id: string, input: string, output: string, endpoints: Array<[string, string, Record<string, string>]>) => ({
    id,
    name: id,
    context_length: 8192,
    input_modalities: [input],
    output_modalities: [output],
    endpoints: endpoints.map(([provider, upstream_model, pricing]) => ({ provider, upstream_model, pricing: { ...zero, ...pricing } })),
  });
  const catalog = {
    providers: [
      provider("co-dear", "cohere", `${retrieval.origin}/cohere`),
      provider("co-cheap", "cohere", `${retrieval.origin}/cohere`),
      provider("voices-dear", "openai", speech.baseUrl),
      provider("voices-cheap", "openai", speech.baseUrl),
      provider("whisper-dear", "openai", media.baseUrl),
      provider("whisper-cheap", "openai", media.baseUrl),
      { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: "http://127.0.0.1:9/v1", api_key_env: "ALPHA_KEY" },
    ],
    models: [
      model("rr/two", "text", "rerank", [
        ["co-dear", "ok", { search_unit: String(dearSearchUnit) }],
        ["co-cheap", "ok", { search_unit: String(cheapSearchUnit) }],
      ]),
      model("rr/zero", "text", "rerank", [["co-cheap", "ok", {}]]),
      model("tts/two", "text", "speech", [
        ["voices-dear", "ok", { character: String(dearCharacter) }],
        ["voices-cheap", "ok", { character: String(cheapCharacter) }],
      ]),
      model("stt/two", "audio", "transcription", [
        ["whisper-dear", "ok", { audio_second: "0.0004" }],
        ["whisper-cheap", "ok", { audio_second: "0.0001" }],
      ]),
      { id: "chat/m", name: "Chat", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "m", pricing: { prompt: "0.000001", completion: "0.000001" } }] },
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), ...secrets });
  key = String((await gw.call("POST", "/keys", { body: { name: "price routing" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await Promise.all([retrieval?.stop(), speech?.stop(), media?.stop()]);
});

const query = "capital of France";
const documents = ["Rome is the capital of Italy.", "Paris is the capital of France."];
const rerank = (body: Record<string, unknown>) => gw.call("POST", "/rerank", { key, body: { query, documents, ...body } });
const input = "Price routing";
const speak = (body: Record<string, unknown>) =>
  fetch(`${gw.apiUrl}/audio/speech`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ input, voice: "alloy", ...body }) });
const wav = tone(16_000, 0.5);
const transcribe = (body: Record<string, unknown>) => gw.call("POST", "/audio/transcriptions", { key, body: { input_audio: { data: wav.toString("base64"), format: "wav" }, ...body } });
const chat = (body: Record<string, unknown>) => gw.call("POST", "/chat/completions", { key, body: { model: "chat/m", messages: [{ role: "user", content: "Hi" }], ...body } });

/** Speaks, reads the whole answer, and waits for its record: the provider that served it and what it cost. */
async function spoken(body: Record<string, unknown>): Promise<{ provider: string; cost: number; auth: string | undefined }> {
  const res = await speak(body);
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  const auth = speech.requests.at(-1)!.headers.authorization;
  const id = String(res.headers.get("x-generation-id"));
  let record: Record<string, unknown> | undefined;
  await eventually(async () => {
    const found = await gw.call("GET", `/generation?id=${id}`, { key });
    record = found.status === 200 ? (found.body.data as Record<string, unknown>) : undefined;
    return record !== undefined;
  }, 5000);
  return { provider: String(record!.provider_name), cost: Number(record!.total_cost), auth };
}

describe("provider.sort by price on endpoints billed in other units", () => {
  it("sends a rerank to the endpoint with the cheaper search unit, and charges its price", async () => {
    for (const provider of [{ sort: "price" }, { sort: { by: "price" } }]) {
      const res = await rerank({ model: "rr/two", provider });
      expect(res.status).toBe(200);
      expect(res.body.provider).toBe("co-cheap");
      expect(retrieval.requests.at(-1)!.headers.authorization).toBe("Bearer co-cheap");
      expect((res.body.usage as { cost: number }).cost).toBeCloseTo(cheapSearchUnit, 12);
    }
    // `:floor` is the same sort.
    expect((await rerank({ model: "rr/two:floor" })).body.provider).toBe("co-cheap");
  });

  it("sends speech to the endpoint with the cheaper character, and charges its price", async () => {
    for (const provider of [{ sort: "price" }, { sort: { by: "price" } }]) {
      const served = await spoken({ model: "tts/two", provider });
      expect(served).toMatchObject({ provider: "voices-cheap", auth: "Bearer voices-cheap" });
      expect(served.cost).toBeCloseTo(input.length * cheapCharacter, 12);
    }
  });

  it("sends a transcription to the endpoint with the cheaper second of audio", async () => {
    const res = await transcribe({ model: "stt/two", provider: { sort: "price" } });
    expect(res.status).toBe(200);
    expect(media.requests.at(-1)!.headers.authorization).toBe("Bearer whisper-cheap");
  });
});

describe("provider.max_price on endpoints billed in other units", () => {
  it("skips a rerank endpoint above max_price.search_unit, and answers 404 as chat does when none is left", async () => {
    const order = ["co-dear", "co-cheap"];
    expect((await rerank({ model: "rr/two", provider: { order } })).body.provider).toBe("co-dear");
    const capped = await rerank({ model: "rr/two", provider: { order, max_price: { search_unit: "0.002" } } });
    expect(capped.body.provider).toBe("co-cheap");
    expect((capped.body.usage as { cost: number }).cost).toBeCloseTo(cheapSearchUnit, 12);
    const before = retrieval.requests.length;
    const none = await rerank({ model: "rr/two", provider: { max_price: { search_unit: "0.0005" } } });
    const chatNone = await chat({ provider: { max_price: { prompt: "0.5" } } });
    expect([none.status, chatNone.status]).toEqual([404, 404]);
    expect(none.body.error?.message).toMatch(/^No endpoints available for rr\/two: /);
    expect(none.body.error?.message).toContain("co-dear: search_unit price above provider.max_price");
    expect(none.body.error?.message).toContain("co-cheap: search_unit price above provider.max_price");
    expect(chatNone.body.error?.message).toMatch(/^No endpoints available for chat\/m: .*alpha: prompt price above provider\.max_price/);
    expect(retrieval.requests.length).toBe(before);
  });

  it("skips a speech endpoint above max_price.character, and answers 404 when none is left", async () => {
    const order = ["voices-dear", "voices-cheap"];
    expect((await spoken({ model: "tts/two", provider: { order } })).provider).toBe("voices-dear");
    const capped = await spoken({ model: "tts/two", provider: { order, max_price: { character: "0.00003" } } });
    expect(capped).toMatchObject({ provider: "voices-cheap", auth: "Bearer voices-cheap" });
    expect(capped.cost).toBeCloseTo(input.length * cheapCharacter, 12);
    const before = speech.requests.length;
    const none = await speak({ model: "tts/two", provider: { max_price: { character: "0.00001" } } });
    expect(none.status).toBe(404);
    expect(((await none.json()) as { error: { message: string } }).error.message).toContain("voices-cheap: character price above provider.max_price");
    expect(speech.requests.length).toBe(before);
  });

  it("refuses a max_price key it does not know with 400 naming it, on every route", async () => {
    const bad = { max_price: { search_units: "0.001" } };
    const answers = [await rerank({ model: "rr/two", provider: bad }), await chat({ provider: bad })];
    const voice = await speak({ model: "tts/two", provider: bad });
    expect([...answers.map((a) => a.status), voice.status]).toEqual([400, 400, 400]);
    for (const a of answers) expect(a.body.error?.message).toMatch(/provider\.max_price.*search_units/);
  });
});

describe("the :free variant of models billed in other units", () => {
  it("refuses it where a price is not zero, as for token-priced models, and serves it where all are", async () => {
    const rr = await rerank({ model: "rr/two:free" });
    const tts = await speak({ model: "tts/two:free" });
    const stt = await transcribe({ model: "stt/two:free" });
    expect([rr.status, tts.status, stt.status]).toEqual([404, 404, 404]);
    expect(rr.body.error?.message).toMatch(/^No endpoints available for rr\/two:free: .*co-dear: not free; .*co-cheap: not free$/);
    expect(((await tts.json()) as { error: { message: string } }).error.message).toContain("voices-dear: not free");
    expect(stt.body.error?.message).toContain("whisper-cheap: not free");
    const free = await rerank({ model: "rr/zero:free" });
    expect(free.status).toBe(200);
    expect((free.body.usage as { cost: number }).cost).toBe(0);
  });
});
