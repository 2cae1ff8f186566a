import { crc32, deflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstPart, startCountingGateway, type ChatMessages, type CountingGateway } from "./support/counting-upstream.js";

/**
 * An image in a chat prompt is billed by its pixels (Gemini counts 258 tokens per 768×768 tile), however the
 * request spells it. A 3072×3072 PNG is 16 tiles, 4,128 tokens: its hold must cover them, so that the charge
 * is what the provider reports and a key whose limit pays for 2,000 image tokens but not the image's is
 * refused before the provider is called.
 */
let fx: CountingGateway;
const textTokens = 20;
const completionTokens = 5;
const prompt = 0.000001;
const completion = 0.000002;

/** A PNG chunk: length, type, data and the CRC of type and data. */
function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A black 8-bit grayscale PNG of this size: a few KB however large, as black rows deflate to little. */
function blackPng(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8); // bit depth
  header.writeUInt8(0, 9); // grayscale
  const rows = deflateSync(Buffer.alloc((width + 1) * height));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", rows), chunk("IEND", Buffer.alloc(0))]);
}

/** Gemini's count for an image: 258 tokens at most 384 px on each side, else 258 per 768×768 tile. */
const geminiTokens = (width: number, height: number) => (width <= 384 && height <= 384 ? 258 : Math.ceil(width / 768) * Math.ceil(height / 768) * 258);

/** The tokens of the first PNG data URL in a chat body, by its IHDR, as the provider counts them. */
const imageTokens = (body: ChatMessages): number => {
  const url = firstPart<{ image_url?: { url: string } }>(body, "image_url")?.image_url?.url;
  if (!url) return 0;
  const png = Buffer.from(url.slice(url.indexOf(",") + 1), "base64");
  return geminiTokens(png.readUInt32BE(16), png.readUInt32BE(20));
};

const large = `data:image/png;base64,${blackPng(3072, 3072).toString("base64")}`;
const small = `data:image/png;base64,${blackPng(512, 512).toString("base64")}`;
const reportedUsd = (tokens: number) => (tokens + textTokens) * prompt + completionTokens * completion;

beforeAll(async () => {
  fx = await startCountingGateway({
    model: "vision/viewer",
    inputModalities: ["text", "image"],
    pricing: { prompt, completion },
    promptTokens: (body) => imageTokens(body) + textTokens,
    completionTokens,
  });
});
afterAll(async () => {
  await fx?.stop();
});

const chatBody = (url: string) => ({ model: "vision/viewer", max_tokens: 100, messages: [{ role: "user", content: [{ type: "text", text: "What is shown?" }, { type: "image_url", image_url: { url } }] }] });

describe("images in a chat prompt, held by their pixels", () => {
  it("charges a 3072×3072 PNG what the provider reports for its tiles", async () => {
    const key = await fx.newKey();
    const res = await fx.gw.call("POST", "/chat/completions", { key, body: chatBody(large) });
    expect(res.status).toBe(200);
    const record = await fx.generation(res.headers.get("x-generation-id")!, key);
    expect(record.native_tokens_prompt).toBe(geminiTokens(3072, 3072) + textTokens);
    expect(record.total_cost).toBeCloseTo(reportedUsd(geminiTokens(3072, 3072)), 9);
  });

  it("refuses a key whose limit pays for 2,000 image tokens but not a 3072×3072 PNG's, before the provider is called", async () => {
    // $0.004 covers a 2,000-token image and 100 completion tokens ($0.0022), not 4,128 image tokens and 100 ($0.0043).
    const key = await fx.newKey(0.004);
    const before = fx.calls();
    const refused = await fx.gw.call("POST", "/chat/completions", { key, body: chatBody(large) });
    expect(refused.status).toBe(402);
    expect(fx.calls()).toBe(before);
    // A 512×512 PNG is one tile, 258 tokens: within the limit.
    const served = await fx.gw.call("POST", "/chat/completions", { key, body: chatBody(small) });
    expect(served.status).toBe(200);
    const record = await fx.generation(served.headers.get("x-generation-id")!, key);
    expect(record.total_cost).toBeCloseTo(reportedUsd(geminiTokens(512, 512)), 9);
  });
});
