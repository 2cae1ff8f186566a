import { describe, expect, it } from "vitest";
import { imageTokenBound, imageTokens, unreadImageTokens } from "./image-tokens.js";

/** A PNG's signature and IHDR chunk, padded past the 256 bytes below which text counts as text. */
function pngUrl(width: number, height: number): string {
  const bytes = Buffer.alloc(400);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes, 0);
  bytes.writeUInt32BE(13, 8);
  bytes.write("IHDR", 12, "latin1");
  bytes.writeUInt32BE(width, 16);
  bytes.writeUInt32BE(height, 20);
  return `data:image/png;base64,${bytes.toString("base64")}`;
}

describe("image token bound", () => {
  it("holds the largest count a provider's rule gives for the size", () => {
    // Gemini's tiles: 16 of 258 tokens for 3072×3072, 121 for 8000×8000; nothing caps them.
    expect(imageTokenBound(3072, 3072)).toBeGreaterThanOrEqual(16 * 258);
    expect(imageTokenBound(8000, 8000)).toBe(121 * 258);
    // OpenAI's patch models at gpt-4.1-nano's multiplier: 1,024 patches for 1024×1024.
    expect(imageTokenBound(1024, 1024)).toBe(Math.ceil(1024 * 2.46));
    // At most 1,536 patches: a 2000×2000 image is scaled down to them; Anthropic's area at 3.75 MP is more.
    expect(imageTokenBound(2000, 2000)).toBe(5000);
    // Small images: Gemini's 258, OpenAI's one tile (255) and Anthropic's area are below the patches'.
    expect(imageTokenBound(100, 100)).toBe(Math.max(258, Math.ceil(16 * 2.46)));
  });

  it("counts OpenAI's detail original up to 10,000 patches", () => {
    expect(imageTokenBound(3200, 3200, "original")).toBe(10_000);
    // 5,625 patches for 2400×2400: above Anthropic's 5,000 and Gemini's 16 tiles.
    expect(imageTokenBound(2400, 2400, "original")).toBe(75 * 75);
    expect(imageTokenBound(3200, 3200, "high")).toBe(imageTokenBound(3200, 3200));
  });

  it("holds an image of unknown size at the highest cap among providers that cap, not at the 2,000 of a file", () => {
    expect(unreadImageTokens).toBe(5000);
    expect(imageTokens("https://example.com/cat.png", undefined, false)).toBe(unreadImageTokens);
    expect(imageTokens("https://example.com/cat.png", "original", false)).toBe(10_000);
    expect(imageTokens(`data:image/bmp;base64,${"Qk0".padEnd(400, "A")}`, undefined, true)).toBe(unreadImageTokens);
    const long = `https://example.com/${"x".repeat(20_000)}`;
    expect(imageTokens(long, undefined, false)).toBe(Buffer.byteLength(long));
    expect(imageTokens(pngUrl(3072, 3072), undefined, true)).toBe(imageTokenBound(3072, 3072));
  });
});
