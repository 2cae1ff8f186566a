import { createServer } from "node:http";
import { OpenRouter } from "@openrouter/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { tinyPng, tinySvg } from "./support/fake-media.js";
import { listenLocal } from "./support/listen.js";
import { perImage, startMediaFixture, type MediaFixture } from "./support/media-fixture.js";

let m: MediaFixture;
let openai: OpenAI;
let sdk: OpenRouter;
/** A web server on loopback: a reference URL pointing here must be refused. */
let local: { baseUrl: string; stop(): Promise<void> };
let localHits = 0;

beforeAll(async () => {
  m = await startMediaFixture();
  openai = new OpenAI({ apiKey: m.key, baseURL: m.gw.apiUrl, maxRetries: 0 });
  sdk = new OpenRouter({ apiKey: m.key, serverURL: m.gw.apiUrl, retryConfig: { strategy: "none" } });
  local = await listenLocal(
    createServer((req, res) => {
      localHits++;
      if (req.url?.endsWith("/redirect")) return void res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
      res.writeHead(200, { "content-type": "image/png" }).end(tinyPng);
    }),
  );
});
afterAll(async () => {
  await m.stop();
  await local.stop();
});

const generate = (body: Record<string, unknown>) => m.gw.call("POST", "/images", { key: m.key, body });
const lastRequest = () => m.fake.requests.at(-1)!;
const dataUrl = `data:image/png;base64,${tinyPng.toString("base64")}`;

describe("POST /images", () => {
  it("generates with the openai SDK, n images at the per-image price", async () => {
    const result = await openai.images.generate({ model: "openai/gpt-image-1", prompt: "a lighthouse at dusk", n: 2, quality: "low", output_format: "png" });
    expect(result.data).toHaveLength(2);
    expect(Buffer.from(result.data![0]!.b64_json!, "base64").equals(tinyPng)).toBe(true);
    const upstream = lastRequest();
    expect(upstream.path).toBe("/v1/images/generations");
    expect(upstream.fields).toMatchObject({ model: "ok", prompt: "a lighthouse at dusk", n: 2, quality: "low" });
    expect((result as unknown as { usage: { cost: number } }).usage.cost).toBeCloseTo(2 * Number(perImage), 12);
  });

  it("passes @openrouter/sdk validation, with aspect ratio and output format", async () => {
    const result = await sdk.images.generate({
      imageGenerationRequest: { model: "openai/gpt-image-1", prompt: "a red bicycle", aspectRatio: "16:9", outputFormat: "webp", outputCompression: 50 },
    });
    expect("data" in result && result.data).toHaveLength(1);
    expect(lastRequest().fields).toMatchObject({ size: "1536x1024", output_format: "webp", output_compression: 50 });
  });

  it("passes moderation and a hashed end user to OpenAI-format endpoints, and refuses what an endpoint cannot do", async () => {
    expect((await generate({ model: "openai/gpt-image-1", prompt: "x", moderation: "low", user: "user-42" })).status).toBe(200);
    const fields = lastRequest().fields;
    expect(fields.moderation).toBe("low");
    expect(fields.user).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(fields)).not.toContain("user-42");
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ model: "openai/gpt-image-1", resolution: "4K" }, "makes no 4K images"],
      [{ model: "openai/gpt-image-1", size: "2K" }, "makes no 2K images"],
      [{ model: "google/gemini-image", resolution: "512" }, "makes no 512 images"],
      [{ model: "google/gemini-image", moderation: "low" }, "has no moderation setting"],
    ];
    const before = m.fake.requests.length;
    for (const [body, reason] of refusals) {
      const res = await generate({ prompt: "x", ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error?.message).toContain(reason);
    }
    expect(m.fake.requests.length).toBe(before);
  });

  it("passes a provider's options to that provider only", async () => {
    const res = await generate({ model: "img/fallback", prompt: "x", provider: { order: ["pixels", "gem"], options: { pixels: { moderation: "low" }, gem: { temperature: 0.5 } } } });
    expect(res.status).toBe(200);
    const [first, second] = m.fake.requests.slice(-2);
    expect(first!.fields).toMatchObject({ moderation: "low" });
    expect(first!.fields).not.toHaveProperty("temperature");
    expect((second!.fields.generationConfig as Record<string, unknown>).temperature).toBe(0.5);
  });

  it("sends references to the edits endpoint as files", async () => {
    const res = await generate({ model: "openai/gpt-image-1", prompt: "make it blue", input_references: [{ type: "image_url", image_url: { url: dataUrl } }, { type: "image_url", image_url: { url: dataUrl } }] });
    expect(res.status).toBe(200);
    const upstream = lastRequest();
    expect(upstream.path).toBe("/v1/images/edits");
    expect(upstream.files.map((f) => f.name)).toEqual(["image[]", "image[]"]);
    expect(upstream.files[0]!.bytes.equals(tinyPng)).toBe(true);
  });

  it("speaks Gemini's wire format, clamping the aspect ratio to what Gemini supports", async () => {
    const res = await generate({ model: "google/gemini-image", prompt: "a tall tower", aspect_ratio: "1:4", resolution: "2K", seed: 7 });
    expect(res.status).toBe(200);
    const upstream = lastRequest();
    expect(upstream.path).toBe("/v1/models/ok:generateContent");
    expect(upstream.headers["x-goog-api-key"]).toBe("gem-secret");
    const config = upstream.fields.generationConfig as { imageConfig: { aspectRatio: string; imageSize: string }; seed: number };
    expect(config.imageConfig).toMatchObject({ aspectRatio: "9:16", imageSize: "2K" });
    expect(config.seed).toBe(7);
    // 12 prompt tokens and 1,290 output tokens at the model's token prices.
    expect((res.body.usage as { cost: number }).cost).toBeCloseTo(12 * 0.0000003 + 1290 * 0.00003, 12);
  });

  it("falls back past a failing provider", async () => {
    const res = await generate({ model: "img/fallback", prompt: "x", provider: { order: ["pixels", "gem"] } });
    expect(res.status).toBe(200);
    expect(lastRequest().path).toContain(":generateContent");
  });

  it("streams partial images, then the completed image with usage, then [DONE]", async () => {
    const res = await fetch(`${m.gw.apiUrl}/images`, {
      method: "POST",
      headers: { authorization: `Bearer ${m.key}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ model: "openai/gpt-image-1", prompt: "a comet", stream: true }),
    });
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const frames = (await res.text()).split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6));
    expect(frames.at(-1)).toBe("[DONE]");
    const events = frames.slice(0, -1).map((f) => JSON.parse(f) as { type: string; usage?: { cost: number } });
    expect(events.map((e) => e.type)).toEqual(["image_generation.partial_image", "image_generation.partial_image", "image_generation.completed"]);
    expect(events.at(-1)!.usage!.cost).toBeCloseTo(Number(perImage), 12);
  });

  it("streams through @openrouter/sdk with validation passing", async () => {
    const stream = await sdk.images.generate({ imageGenerationRequest: { model: "openai/gpt-image-1", prompt: "a comet", stream: true } });
    const types: string[] = [];
    for await (const event of stream as AsyncIterable<{ type: string }>) types.push(event.type);
    expect(types.at(-1)).toBe("image_generation.completed");
  });

  it("ends a stream cut mid-way with an error event and no [DONE]", async () => {
    const res = await fetch(`${m.gw.apiUrl}/images`, {
      method: "POST",
      headers: { authorization: `Bearer ${m.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "img/cut", prompt: "a comet", stream: true }),
    });
    const text = await res.text();
    expect(text).toContain('"type":"image_generation.partial_image"');
    expect(text).toContain('"type":"error"');
    expect(text).not.toContain("[DONE]");
  });

  it("returns svg as base64 of its UTF-8 markup", async () => {
    const res = await generate({ model: "img/vector", prompt: "a red square", output_format: "svg" });
    expect(res.status).toBe(200);
    const [image] = res.body.data as unknown as Array<{ b64_json: string; media_type: string }>;
    expect(image!.media_type).toBe("image/svg+xml");
    expect(Buffer.from(image!.b64_json, "base64").toString("utf8")).toBe(tinySvg);
  });

  it("charges images to the key through the ledger, and estimates usage a provider does not report", async () => {
    const created = await m.gw.call("POST", "/keys", { body: { name: "painter" } });
    const hash = String((created.body.data as Record<string, unknown>).hash);
    const res = await m.gw.call("POST", "/images", { key: String(created.body.key), body: { model: "img/nousage", prompt: "a lighthouse", n: 3 } });
    expect(res.status).toBe(200);
    const cost = (res.body.usage as { cost: number }).cost;
    expect(cost).toBeCloseTo(3 * Number(perImage), 12);
    await eventually(async () => Number((await m.gw.call("GET", `/keys/${hash}`)).body.data?.usage) === cost, 5000);
  });

  it("refuses to hand out a provider's image URL, and reports a provider's safety block as 400", async () => {
    const url = await generate({ model: "img/url-only", prompt: "x" });
    expect(url.status).toBe(502);
    const blocked = await generate({ model: "img/blocked", prompt: "x" });
    expect(blocked.status).toBe(400);
    expect((blocked.body.error as { metadata?: unknown }).metadata).toMatchObject({ provider_message: expect.stringMatching(/SAFETY/) });
  });

  it("answers buffered JSON for a stream request on a provider that does not stream", async () => {
    const res = await generate({ model: "google/gemini-image", prompt: "x", stream: true });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
  });
});

describe("invalid image requests", () => {
  it.each([
    ["no prompt", { prompt: "" }, /prompt/],
    ["an unknown aspect ratio", { aspect_ratio: "7:3" }, /aspect_ratio/],
    ["transparent jpeg", { background: "transparent", output_format: "jpeg" }, /transparent requires output_format png or webp/],
    ["n of 11", { n: 11 }, /n/],
    ["n of 0", { n: 0 }, /n/],
    ["compression over 100", { output_compression: 101 }, /output_compression/],
    ["an unknown format", { output_format: "gif" }, /output_format/],
    ["a bad size", { size: "huge" }, /size/],
    ["pixels with a mismatched resolution", { size: "1024x1024", resolution: "4K" }, /resolution: does not match size 1024x1024/],
    ["pixels with a mismatched aspect ratio", { size: "1024x1024", aspect_ratio: "16:9" }, /aspect_ratio: does not match size/],
    ["a size tier against another resolution", { size: "2K", resolution: "4K" }, /resolution: conflicts with size 2K/],
    ["17 references", { input_references: Array.from({ length: 17 }, () => ({ type: "image_url", image_url: { url: dataUrl } })) }, /at most 16/],
    ["a file: reference", { input_references: [{ type: "image_url", image_url: { url: "file:///etc/passwd" } }] }, /input_references/],
    ["a reference that is not an image", { input_references: [{ type: "image_url", image_url: { url: `data:image/png;base64,${Buffer.from("hello").toString("base64")}` } }] }, /not a PNG, JPEG, WebP or GIF/],
    ["n above a single-image provider", { model: "google/gemini-image", n: 2 }, /makes one image per request/],
    ["svg from a provider without it", { model: "google/gemini-image", output_format: "svg" }, /cannot produce svg/],
    ["a transcription model", { model: "openai/whisper-1" }, /not an image generation model/],
  ])("refuses %s with 400", async (_what, patch, message) => {
    const res = await generate({ model: "openai/gpt-image-1", prompt: "x", ...patch });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(message);
  });

  it("refuses references on loopback, the metadata address, and redirects to private addresses, without fetching them", async () => {
    const hits = localHits;
    for (const url of [`${local.baseUrl}/image.png`, "http://169.254.169.254/latest/meta-data/", "http://[::1]/x.png", "http://10.0.0.1/x.png"]) {
      const res = await generate({ model: "openai/gpt-image-1", prompt: "x", input_references: [{ type: "image_url", image_url: { url } }] });
      expect(res.status, url).toBe(400);
      expect(res.body.error?.message).toMatch(/input_references\.0\.image_url\.url: cannot be used: refusing/);
    }
    expect(localHits).toBe(hits);
  });

  it("answers 429 when every provider is rate-limited, 404 for an unknown model", async () => {
    const limited = await generate({ model: "img/limited", prompt: "x" });
    expect(limited.status).toBe(429);
    // The provider's own Retry-After is passed on.
    expect(limited.headers.get("retry-after")).toBe("30");
    expect((await generate({ model: "nobody/nothing", prompt: "x" })).status).toBe(404);
  });

  it("answers 402 when the key cannot afford n images", async () => {
    const key = String((await m.gw.call("POST", "/keys", { body: { name: "tight", limit: 0.05 } })).body.key);
    const res = await m.gw.call("POST", "/images", { key, body: { model: "openai/gpt-image-1", prompt: "x", n: 2 } });
    expect(res.status).toBe(402);
    expect((await m.gw.call("POST", "/images", { key, body: { model: "openai/gpt-image-1", prompt: "x" } })).status).toBe(200);
  });
});

describe("references from the web", () => {
  let dev: MediaFixture;
  beforeAll(async () => {
    dev = await startMediaFixture({ REFERENCE_FETCH_ALLOW_PRIVATE: "true", MAX_REFERENCE_BYTES: "2048" });
  });
  afterAll(() => dev.stop());

  it("fetches http references when the operator allows local addresses, and still refuses oversize ones", async () => {
    const ok = await dev.gw.call("POST", "/images", { key: dev.key, body: { model: "openai/gpt-image-1", prompt: "x", input_references: [{ type: "image_url", image_url: { url: `${local.baseUrl}/image.png` } }] } });
    expect(ok.status).toBe(200);
    expect(dev.fake.requests.at(-1)!.files[0]!.bytes.equals(tinyPng)).toBe(true);
    const big = `data:image/png;base64,${Buffer.concat([tinyPng, Buffer.alloc(4096)]).toString("base64")}`;
    const res = await dev.gw.call("POST", "/images", { key: dev.key, body: { model: "openai/gpt-image-1", prompt: "x", input_references: [{ type: "image_url", image_url: { url: big } }] } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/over the 2048 byte limit/);
  });

  it("follows no redirect to the metadata address even when local addresses are allowed", async () => {
    const res = await dev.gw.call("POST", "/images", { key: dev.key, body: { model: "openai/gpt-image-1", prompt: "x", input_references: [{ type: "image_url", image_url: { url: `${local.baseUrl}/redirect` } }] } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/link-local/);
  });
});
