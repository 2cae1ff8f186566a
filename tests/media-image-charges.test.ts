import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { imageTokenPricing, perImage, recorded, startMediaFixture, type MediaFixture } from "./support/media-fixture.js";

let m: MediaFixture;

beforeAll(async () => {
  m = await startMediaFixture();
});
afterAll(() => m.stop());

async function newKey(): Promise<{ key: string; hash: string }> {
  const created = await m.gw.call("POST", "/keys", { body: { name: "image charges" } });
  return { key: String(created.body.key), hash: String(created.body.data?.hash) };
}
const usageOf = async (hash: string) => Number((await m.gw.call("GET", `/keys/${hash}`)).body.data?.usage);

/** A 1K image's estimated tokens, as docs/api.md states them. */
const typicalImageTokens = 1290;

describe("what images are charged", () => {
  it("estimates 1,290 completion tokens per image when a token-priced provider reports no usage", async () => {
    const { key } = await newKey();
    const prompt = "a lighthouse at dusk";
    const res = await m.gw.call("POST", "/images", { key, body: { model: "img/tokens-nousage", prompt, n: 2 } });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    const promptTokens = Math.ceil(prompt.length / 4);
    const expected = promptTokens * Number(imageTokenPricing.prompt) + 2 * typicalImageTokens * Number(imageTokenPricing.completion);
    const usage = res.body.usage as { completion_tokens: number; cost: number };
    expect(usage.completion_tokens).toBe(2 * typicalImageTokens);
    expect(usage.cost).toBeCloseTo(expected, 12);
    const generation = await recorded(m.gw, key, String(res.headers.get("x-generation-id")));
    expect(generation).toMatchObject({ tokens_completion: 2 * typicalImageTokens });
    expect(Number(generation.total_cost)).toBeCloseTo(expected, 12);
  });

  it.each([
    ["an OpenAI-format server", "img/extra"],
    ["Gemini", "img/gem-extra"],
  ])("hands out only the n images held and paid for when %s makes more", async (_what, model) => {
    const { key } = await newKey();
    const res = await m.gw.call("POST", "/images", { key, body: { model, prompt: "a kite", n: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    const generation = await recorded(m.gw, key, String(res.headers.get("x-generation-id")));
    expect(generation).toMatchObject({ num_media_completion: 1 });
  });

  it("charges a client that leaves an image stream after its first partial image what the provider was asked to make", async () => {
    const { key, hash } = await newKey();
    const abort = new AbortController();
    const res = await fetch(`${m.gw.apiUrl}/images`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "img/partial-stall", prompt: "a comet", n: 2, stream: true }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const id = String(res.headers.get("x-generation-id"));
    const reader = res.body!.getReader();
    let seen = "";
    while (!seen.includes("image_generation.partial_image")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += Buffer.from(value).toString("utf8");
    }
    expect(seen).toContain("image_generation.partial_image");
    abort.abort();
    await reader.cancel().catch(() => undefined);
    const generation = await recorded(m.gw, key, id);
    expect(generation).toMatchObject({ cancelled: true, streamed: true });
    expect(Number(generation.total_cost)).toBeCloseTo(2 * Number(perImage), 12);
    await eventually(async () => Math.abs((await usageOf(hash)) - 2 * Number(perImage)) < 1e-12, 5000);
  });
});
