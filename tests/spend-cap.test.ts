import { OpenRouter } from "@openrouter/sdk";
import OpenAI from "openai";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { overTranscription, startFakeMediaProvider, type FakeMediaProvider } from "./support/fake-media.js";
import { overUsage, startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { tone } from "./support/media-fixture.js";

/**
 * A provider that reports more usage than the request allowed is charged at most the worst case held for
 * it: the key's limit is never overrun, the reported usage stays on the record, and the overrun is counted.
 */
let alpha: FakeProvider;
let media: FakeMediaProvider;

// $0.00001 per completion token and a free prompt: `max_tokens: 100` holds exactly $0.001, and the 2,000
// tokens the provider reports cost $0.02.
const perToken = { prompt: "0", completion: "0.00001" };
const held = 0.001;
const reported = overUsage.completion_tokens * 0.00001;
// A one-second WAV holds 50 audio tokens at $0.000006 and 120 transcript tokens at $0.00001: $0.0015. The
// provider reports a million audio tokens and half a million transcript tokens: $11.
const sttPricing = { prompt: "0", completion: "0.00001", audio: "0.000006" };
const sttHeld = 0.0015;
const sttReported = overTranscription.input_tokens * 0.000006 + overTranscription.output_tokens * 0.00001;

async function startCapGateway(env: Record<string, string> = {}): Promise<TestGateway> {
  const catalog = {
    providers: [
      { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, requires_api_key: false },
      { slug: "whisper", name: "Whisper", adapter: "openai", base_url: media.baseUrl, requires_api_key: false },
    ],
    models: [
      { id: "cap/over", name: "Over", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "over-usage", pricing: perToken }] },
      {
        id: "cap/stt-over",
        name: "STT over",
        context_length: 1,
        input_modalities: ["audio"],
        output_modalities: ["transcription"],
        endpoints: [{ provider: "whisper", upstream_model: "over-usage", pricing: sttPricing }],
      },
      {
        id: "cap/stt-absurd",
        name: "STT absurd",
        context_length: 1,
        input_modalities: ["audio"],
        output_modalities: ["transcription"],
        endpoints: [{ provider: "whisper", upstream_model: "absurd-usage", pricing: sttPricing }],
      },
    ],
  };
  return startTestGateway({ ...(await catalogEnv(catalog)), ...env });
}

/** One second of 8 kHz audio: its length, and so its worst case, is exact. */
const oneSecondWav = () => tone(8000, 1);

/** A series' value in Prometheus' text format, 0 when absent. */
async function metric(gw: TestGateway, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${gw.baseUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

const overruns = (gw: TestGateway, service: string, model: string, charged: string) =>
  metric(gw, "switchyard_spend_overruns_total", { service, provider: service === "media" ? "whisper" : "alpha", model, charged });

async function newKey(gw: TestGateway, limit: number) {
  const created = await gw.call("POST", "/keys", { body: { name: "capped", limit } });
  expect(created.status).toBe(201);
  return { key: String(created.body.key), hash: String(created.body.data?.hash) };
}

const usageOf = async (gw: TestGateway, hash: string) => Number((await gw.call("GET", `/keys/${hash}`)).body.data?.usage);
/** Settled usage arrives by event; it must reach `usd` and be exactly that. */
const usageReaches = (gw: TestGateway, hash: string, usd: number) => eventually(async () => (await usageOf(gw, hash)) === usd, 10_000);

const transcribeOver = (gw: TestGateway, key: string, model = "cap/stt-over") =>
  gw.call("POST", "/audio/transcriptions", { key, body: { model, input_audio: { data: oneSecondWav().toString("base64"), format: "wav" } } });

const messages = [{ role: "user" as const, content: "Say hello" }];
type CostedUsage = { cost: number; cost_details: { upstream_inference_cost: number } };

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  media = await startFakeMediaProvider();
});
afterAll(async () => {
  await alpha?.stop();
  await media?.stop();
});

describe("charges capped at the hold (the default)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startCapGateway();
  });
  afterAll(() => gw?.stop());

  it("charges a buffered completion that reports 2,000 tokens for max_tokens 100 the held $0.001, and keeps the reported usage on the record", async () => {
    const { key, hash } = await newKey(gw, 0.01);
    const before = await overruns(gw, "inference", "cap/over", "held");
    const openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0 });
    const completion = await openai.chat.completions.create({ model: "cap/over", messages, max_tokens: 100 });
    const usage = completion.usage as unknown as CostedUsage & { completion_tokens: number };
    expect(usage.completion_tokens).toBe(overUsage.completion_tokens);
    expect(usage.cost).toBe(held);
    expect(usage.cost_details.upstream_inference_cost).toBeCloseTo(reported, 12);

    const sdk = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl, retryConfig: { strategy: "none" } });
    const record = (await sdk.generations.getGeneration({ id: completion.id })).data;
    expect(record.tokensCompletion).toBe(overUsage.completion_tokens);
    expect(record.totalCost).toBe(held);
    expect(record.usage).toBe(held);
    // What the reported usage came to: above what was charged, which says the charge was capped.
    expect(record.upstreamInferenceCost).toBeCloseTo(reported, 12);

    await usageReaches(gw, hash, held);
    expect(await overruns(gw, "inference", "cap/over", "held")).toBe(before + 1);
    expect(await metric(gw, "switchyard_spend_overrun_usd_total", { model: "cap/over", figure: "reported" })).toBeGreaterThanOrEqual(reported);
  });

  it("charges a streamed completion the same, with the capped cost in the last chunk's usage", async () => {
    const { key, hash } = await newKey(gw, 0.01);
    const before = await overruns(gw, "inference", "cap/over", "held");
    const openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0 });
    const stream = await openai.chat.completions.create({ model: "cap/over", messages, max_tokens: 100, stream: true });
    let id = "";
    let usage: (CostedUsage & { completion_tokens: number }) | undefined;
    for await (const chunk of stream) {
      id = chunk.id;
      if (chunk.usage) usage = chunk.usage as unknown as CostedUsage & { completion_tokens: number };
    }
    expect(usage?.completion_tokens).toBe(overUsage.completion_tokens);
    expect(usage?.cost).toBe(held);
    expect(usage?.cost_details.upstream_inference_cost).toBeCloseTo(reported, 12);

    const record = (await gw.call("GET", `/generation?id=${id}`, { key })).body.data!;
    expect(record).toMatchObject({ streamed: true, tokens_completion: overUsage.completion_tokens, total_cost: held });
    expect(record.upstream_inference_cost).toBeCloseTo(reported, 12);

    await usageReaches(gw, hash, held);
    expect(await overruns(gw, "inference", "cap/over", "held")).toBe(before + 1);
  });

  it("charges a transcription whose provider reports more tokens than its audio allows the held worst case", async () => {
    const { key, hash } = await newKey(gw, 0.01);
    const before = await overruns(gw, "media", "cap/stt-over", "held");
    const res = await transcribeOver(gw, key);
    expect(res.status).toBe(200);
    expect(res.body.usage).toMatchObject({ cost: sttHeld, input_tokens: overTranscription.input_tokens, output_tokens: overTranscription.output_tokens });
    await usageReaches(gw, hash, sttHeld);
    expect(await overruns(gw, "media", "cap/stt-over", "held")).toBe(before + 1);
  });

  it("records and charges a transcription whose provider reports more tokens than a record keeps", async () => {
    const { key, hash } = await newKey(gw, 0.01);
    const res = await transcribeOver(gw, key, "cap/stt-absurd");
    expect(res.status).toBe(200);
    await usageReaches(gw, hash, sttHeld);
    const record = (await gw.call("GET", `/generation?id=${res.headers.get("x-generation-id")}`, { key })).body.data!;
    expect(record).toMatchObject({ tokens_prompt: 2 ** 31 - 1, tokens_completion: 2 ** 31 - 1, total_cost: sttHeld });
  });

  it.runIf(testEnv.databaseUrl)("keeps the transcription's reported usage and its uncapped cost on the media record", async () => {
    const { key } = await newKey(gw, 0.01);
    const res = await transcribeOver(gw, key);
    expect(res.status).toBe(200);
    const db = new pg.Client({ connectionString: gw.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ prompt_tokens: number; completion_tokens: number; cost_usd: string; upstream_cost_usd: string }>(
        "SELECT prompt_tokens, completion_tokens, cost_usd::float8::text AS cost_usd, upstream_cost_usd::float8::text AS upstream_cost_usd FROM media.generations WHERE id = $1",
        [res.headers.get("x-generation-id")],
      );
      expect(rows[0]).toEqual({
        prompt_tokens: overTranscription.input_tokens,
        completion_tokens: overTranscription.output_tokens,
        cost_usd: String(sttHeld),
        upstream_cost_usd: String(sttReported),
      });
    } finally {
      await db.end();
    }
  });
});

describe("SPEND_CHARGE_BEYOND_HOLD=true", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startCapGateway({ SPEND_CHARGE_BEYOND_HOLD: "true" });
  });
  afterAll(() => gw?.stop());

  it("charges what the provider reported, past the hold and the key's limit, and counts it as charged as reported", async () => {
    const { key, hash } = await newKey(gw, 0.01);
    const before = await overruns(gw, "inference", "cap/over", "reported");
    const openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0 });
    const completion = await openai.chat.completions.create({ model: "cap/over", messages, max_tokens: 100 });
    expect((completion.usage as unknown as CostedUsage).cost).toBeCloseTo(reported, 12);
    await usageReaches(gw, hash, reported);
    expect(await overruns(gw, "inference", "cap/over", "reported")).toBe(before + 1);
  });
});
