import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv, imageModel } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeMediaProvider, type FakeMediaProvider } from "./support/fake-media.js";
import { startFakeRetrieval, type FakeRetrieval } from "./support/fake-retrieval.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";
import { pcmWav } from "./support/wav.js";

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** An HTTP receiver on 127.0.0.1 that keeps what it gets and answers 500 to the first `failFirst` posts. */
async function receiver(failFirst = 0) {
  const received: Received[] = [];
  let failures = failFirst;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
    if (failures > 0) {
      failures -= 1;
      return void res.writeHead(500).end("not now");
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  const listening = await listenLocal(server);
  return { url: listening.baseUrl.replace(/\/v1$/, ""), received, stop: listening.stop };
}

const secret = "broadcast-webhook-secret-0123456789abcdef";
/** The collector's posts of generation spans; the gateway's own request traces go to the same endpoint. */
const broadcasts = () => collector.received.filter((r) => r.body.includes('"scope":{"name":"switchyard.broadcast"}'));
let gw: TestGateway;
let upstream: FakeProvider;
let media: FakeMediaProvider;
let vectors: FakeRetrieval;
let collector: Awaited<ReturnType<typeof receiver>>;
let webhook: Awaited<ReturnType<typeof receiver>>;
let key: string;

beforeAll(async () => {
  upstream = await startFakeProvider("alpha");
  media = await startFakeMediaProvider();
  vectors = await startFakeRetrieval();
  collector = await receiver();
  webhook = await receiver(1);
  gw = await startTestGateway({
    ...(await catalogEnv({
      providers: [
        { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: upstream.baseUrl, requires_api_key: false },
        { slug: "pixels", name: "Pixels", adapter: "openai", base_url: media.baseUrl, requires_api_key: false },
        { slug: "vectors", name: "Vectors", adapter: "openai", base_url: `${vectors.origin}/openai`, requires_api_key: false },
      ],
      models: [
        { id: "m/ok", name: "ok", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: { prompt: "0.000001", completion: "0.000002" } }] },
        imageModel("m/image", "pixels"),
        { id: "m/embed", name: "embed", context_length: 8192, output_modalities: ["embeddings"], endpoints: [{ provider: "vectors", upstream_model: "ok", pricing: { prompt: "0.000001", completion: "0" } }] },
        {
          id: "m/whisper",
          name: "whisper",
          context_length: 1,
          input_modalities: ["audio"],
          output_modalities: ["transcription"],
          endpoints: [{ provider: "pixels", upstream_model: "ok", pricing: { prompt: "0", completion: "0", audio_second: "0.0001" } }],
        },
      ],
    })),
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=acme,authorization=Bearer%20otlp-token",
    BROADCAST_WEBHOOK_URL: `${webhook.url}/hooks/switchyard`,
    BROADCAST_WEBHOOK_SECRET: secret,
  });
  key = String((await gw.call("POST", "/keys", { body: { name: "traced" } })).body.key);
  // Broadcast is a workspace's choice, off by default: the default workspace turns it on.
  const workspaceId = String((await gw.call("GET", "/key", { key })).body.data?.workspace_id);
  expect((await gw.call("PATCH", `/workspaces/${workspaceId}`, { body: { is_observability_broadcast_enabled: true } })).status).toBe(200);
});
afterAll(async () => {
  await gw?.stop();
  await upstream?.stop();
  await media?.stop();
  await vectors?.stop();
  await collector?.stop();
  await webhook?.stop();
});

const trace = {
  trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
  trace_name: "checkout",
  span_name: "summarize-cart",
  generation_name: "cart-summary",
  parent_span_id: "00f067aa0ba902b7",
  customer: "acme-7",
};

type Spans = { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }> };
const spansOf = (body: string) => (JSON.parse(body) as Spans).resourceSpans[0]!.scopeSpans[0]!.spans;
const attributesOf = (span: Record<string, unknown>) => Object.fromEntries((span.attributes as Array<{ key: string; value: Record<string, unknown> }>).map((a) => [a.key, Object.values(a.value)[0]]));

/** One second of silent 16 kHz mono WAV. */
const wav = (): Buffer => pcmWav(16_000, 16_000);

describe("trace broadcast", () => {
  it("sends each generation's trace metadata as an OTLP span and a signed webhook, retrying a receiver that failed", async () => {
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "m/ok", messages: [{ role: "user", content: "hi" }], trace } });
    expect(res.status).toBe(200);
    const id = String(res.body.id);

    // The webhook failed once; the event came again and was delivered.
    await eventually(async () => webhook.received.filter((r) => r.body.includes(id)).length >= 2, 15_000);
    const delivery = webhook.received.filter((r) => r.body.includes(id)).at(-1)!;
    expect(delivery.path).toBe("/hooks/switchyard");
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(delivery.headers["x-switchyard-signature"]))!;
    expect(v1).toBe(createHmac("sha256", secret).update(`${t}.${delivery.body}`).digest("hex"));
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(60);
    expect(JSON.parse(delivery.body)).toMatchObject({
      type: "generation",
      generation_id: id,
      trace_id: trace.trace_id,
      trace_name: "checkout",
      span_name: "summarize-cart",
      generation_name: "cart-summary",
      parent_span_id: trace.parent_span_id,
      metadata: { customer: "acme-7" },
      model: "m/ok",
      provider: "alpha",
      status: "completed",
      usage: { prompt_tokens: 12, completion_tokens: 5 },
    });

    await eventually(async () => broadcasts().some((r) => r.body.includes(id)), 15_000);
    const exported = broadcasts().find((r) => r.body.includes(id))!;
    expect(exported.path).toBe("/v1/traces");
    expect(exported.headers).toMatchObject({ "x-tenant": "acme", authorization: "Bearer otlp-token" });
    const span = (JSON.parse(exported.body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }> }).resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    expect(span).toMatchObject({ traceId: trace.trace_id, parentSpanId: trace.parent_span_id, name: "summarize-cart", status: { code: 1 } });
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    const attributes = Object.fromEntries((span.attributes as Array<{ key: string; value: Record<string, unknown> }>).map((a) => [a.key, Object.values(a.value)[0]]));
    expect(attributes).toMatchObject({ "gen_ai.request.model": "m/ok", "gen_ai.usage.input_tokens": "12", "switchyard.generation_id": id, "switchyard.metadata.customer": "acme-7" });
    expect(BigInt(String(span.endTimeUnixNano))).toBeGreaterThanOrEqual(BigInt(String(span.startTimeUnixNano)));

    // The webhook's failure was its own: the collector, which took the span at once, got it once.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(broadcasts().filter((r) => r.body.includes(id))).toHaveLength(1);
    expect(webhook.received.filter((r) => r.body.includes(id))).toHaveLength(2);
  });

  it("broadcasts image generations and transcriptions with their trace too, each once per destination", async () => {
    const image = await gw.call("POST", "/images", { key, body: { model: "m/image", prompt: "a lighthouse", trace: { trace_id: "img-run", customer: "acme-8" } } });
    expect(image.status, JSON.stringify(image.body)).toBe(200);
    const imageId = String(image.headers.get("x-generation-id"));
    const heard = await fetch(`${gw.apiUrl}/audio/transcriptions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m/whisper", input_audio: { data: wav().toString("base64"), format: "wav" }, trace: { trace_id: trace.trace_id, span_name: "listen" } }),
    });
    expect(heard.status).toBe(200);
    const heardId = String(heard.headers.get("x-generation-id"));
    // A multipart upload names its trace as JSON text, as it does `provider`.
    const form = new FormData();
    form.set("model", "m/whisper");
    form.set("file", new Blob([new Uint8Array(wav())], { type: "audio/wav" }), "clip.wav");
    form.set("trace", JSON.stringify({ generation_name: "form-upload" }));
    const uploaded = await fetch(`${gw.apiUrl}/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
    expect(uploaded.status).toBe(200);
    const uploadedId = String(uploaded.headers.get("x-generation-id"));

    const ids = [imageId, heardId, uploadedId];
    await eventually(async () => ids.every((id) => broadcasts().some((r) => r.body.includes(id)) && webhook.received.some((r) => r.body.includes(id))), 15_000);
    const [imageSpan, heardSpan, uploadedSpan] = ids.map((id) => spansOf(broadcasts().find((r) => r.body.includes(id))!.body)[0]!);
    expect(attributesOf(imageSpan!)).toMatchObject({ "gen_ai.operation.name": "image_generation", "switchyard.trace_id": "img-run", "switchyard.metadata.customer": "acme-8", "switchyard.usage.images": "1" });
    expect(heardSpan).toMatchObject({ traceId: trace.trace_id, name: "listen" });
    expect(attributesOf(heardSpan!)).toMatchObject({ "gen_ai.operation.name": "transcription", "gen_ai.request.model": "m/whisper", "switchyard.usage.audio_seconds": "1" });
    expect(uploadedSpan).toMatchObject({ name: "form-upload" });
    const hook = JSON.parse(webhook.received.find((r) => r.body.includes(imageId))!.body) as Record<string, unknown>;
    expect(hook).toMatchObject({ type: "generation", operation: "image_generation", generation_id: imageId, trace_id: "img-run", metadata: { customer: "acme-8" }, usage: { images: 1 } });
    for (const id of ids) {
      expect(broadcasts().filter((r) => r.body.includes(id))).toHaveLength(1);
      expect(webhook.received.filter((r) => r.body.includes(id))).toHaveLength(1);
    }
  });

  it("names embeddings generations as such", async () => {
    const res = await gw.call("POST", "/embeddings", { key, body: { model: "m/embed", input: ["a", "b"], trace: { trace_id: "embed-run" } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = String(res.body.id);
    await eventually(async () => broadcasts().some((r) => r.body.includes(id)) && webhook.received.some((r) => r.body.includes(id)), 15_000);
    const span = spansOf(broadcasts().find((r) => r.body.includes(id))!.body)[0]!;
    expect(attributesOf(span)).toMatchObject({ "gen_ai.operation.name": "embeddings", "gen_ai.request.model": "m/embed", "switchyard.trace_id": "embed-run" });
    expect(JSON.parse(webhook.received.find((r) => r.body.includes(id))!.body)).toMatchObject({ operation: "embeddings", generation_id: id });
  });

  it("sends nothing of a workspace that has not turned broadcast on", async () => {
    const workspace = await gw.call("POST", "/workspaces", { body: { name: "Quiet", slug: "quiet" } });
    const quiet = String((await gw.call("POST", "/keys", { body: { name: "quiet", workspace_id: workspace.body.data?.id } })).body.key);
    const res = await gw.call("POST", "/chat/completions", { key: quiet, body: { model: "m/ok", messages: [{ role: "user", content: "hi" }], trace } });
    expect(res.status).toBe(200);
    const image = await gw.call("POST", "/images", { key: quiet, body: { model: "m/image", prompt: "a lighthouse" } });
    const ids = [String(res.body.id), String(image.headers.get("x-generation-id"))];
    // Later generations of a broadcasting workspace arrive (one per stream): the quiet ones, before them, never will.
    const loud = await gw.call("POST", "/chat/completions", { key, body: { model: "m/ok", messages: [{ role: "user", content: "hi" }] } });
    const loudImage = await gw.call("POST", "/images", { key, body: { model: "m/image", prompt: "a lighthouse" } });
    const loudIds = [String(loud.body.id), String(loudImage.headers.get("x-generation-id"))];
    await eventually(async () => loudIds.every((id) => broadcasts().some((r) => r.body.includes(id))), 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const id of ids) {
      expect(broadcasts().some((r) => r.body.includes(id))).toBe(false);
      expect(webhook.received.some((r) => r.body.includes(id))).toBe(false);
    }
  });

  it("derives OTLP ids when the request's are not OTLP's hex form, and keeps them as attributes", async () => {
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "m/ok", messages: [{ role: "user", content: "hi" }], trace: { trace_id: "run-42" } } });
    const id = String(res.body.id);
    await eventually(async () => broadcasts().some((r) => r.body.includes(id)), 15_000);
    const span = spansOf(broadcasts().find((r) => r.body.includes(id))!.body)[0]!;
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.parentSpanId).toBeUndefined();
    expect(JSON.stringify(span.attributes)).toContain("run-42");
  });
});
