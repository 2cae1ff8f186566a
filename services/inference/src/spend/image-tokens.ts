import { imageSize } from "./image-size.js";

/**
 * Gemini: an image at most 384 px on both sides is 258 tokens; a larger one is cut into 768×768 tiles of 258
 * tokens each (https://ai.google.dev/gemini-api/docs/tokens, "Images are tokenized based on their dimensions",
 * as https://geminibyexample.com/027-calculate-input-tokens/ computes it). Nothing caps the tiles: a 3072×3072
 * image is 16 tiles, 4,128 tokens. Gemini 3 models cap an image by `media_resolution` instead
 * (https://ai.google.dev/gemini-api/docs/media-resolution), below the tile count of a large image.
 */
function geminiTokens(width: number, height: number): number {
  if (width <= 384 && height <= 384) return 258;
  return Math.ceil(width / 768) * Math.ceil(height / 768) * 258;
}

/**
 * OpenAI's tile models (gpt-4o, gpt-4.1, the o-series but o4-mini) at `detail: "high"`: scaled to fit 2048×2048,
 * then down to 768 px on the short side, 170 tokens per 512×512 tile plus 85
 * (https://platform.openai.com/docs/guides/images-vision#calculating-costs). At most 1,445 tokens.
 */
function openaiTileTokens(width: number, height: number): number {
  const fit = Math.min(1, 2048 / Math.max(width, height));
  const short = Math.min(1, 768 / (Math.min(width, height) * fit));
  const scale = fit * short;
  return 85 + 170 * Math.ceil((width * scale) / 512) * Math.ceil((height * scale) / 512);
}

/**
 * OpenAI's patch models: a token per 32×32 patch, an image of more than 1,536 patches scaled down to fit them,
 * times the model's multiplier: 1.62 for gpt-4.1-mini, 1.72 for o4-mini, 2.46 for gpt-4.1-nano, the largest
 * (https://platform.openai.com/docs/guides/images-vision#calculating-costs). At most 3,779 tokens.
 */
const patchMultiplier = 2.46;
const patchBudget = 1536;

/**
 * OpenAI's `detail: "original"` reads an image at its own size up to 10,000 patches, a token each
 * (https://platform.openai.com/docs/guides/images-vision#model-sizing-behavior, the budget openai/codex#19865
 * counts with).
 */
const originalPatchBudget = 10_000;

const patches = (width: number, height: number) => Math.ceil(width / 32) * Math.ceil(height / 32);

/**
 * Anthropic: width × height / 750 tokens after scaling to at most 1568 px on the long edge, about 1,600
 * (https://platform.claude.com/docs/en/build-with-claude/vision); Claude Opus 4.7 reads images up to 3.75
 * megapixels (https://apidog.com/blog/claude-opus-4-7-api/), 5,000 tokens. Scaling only shrinks the area, so
 * the area capped at 3.75 megapixels bounds both.
 */
const anthropicPixels = 3_750_000;

/**
 * The most tokens a provider in the catalog bills for one image of this size: the largest of Gemini's tiles,
 * OpenAI's tiles and patches (at the largest multiplier) and Anthropic's area. `detail: "original"` (OpenAI)
 * reads up to 10,000 patches, so it may count more than the others.
 */
export function imageTokenBound(width: number, height: number, detail?: string): number {
  const capped = Math.ceil(Math.min(patches(width, height), patchBudget) * patchMultiplier);
  const original = detail === "original" ? Math.min(patches(width, height), originalPatchBudget) : 0;
  const anthropic = Math.ceil(Math.min(width * height, anthropicPixels) / 750);
  return Math.max(geminiTokens(width, height), openaiTileTokens(width, height), capped, original, anthropic);
}

/**
 * What an image whose size the gateway cannot read is held at: a URL the provider fetches, a format it does
 * not read. The highest cap among providers that cap an image: Anthropic's 5,000 (3.75 megapixels / 750),
 * above OpenAI's patch models' 3,779; at `detail: "original"` OpenAI's 10,000 patches. Gemini's tiles have no
 * cap: a huge image by URL may be billed more than this, and the gateway cannot know before the provider
 * fetches it; it holds this allowance and charges up to the hold.
 */
export const unreadImageTokens = Math.ceil(anthropicPixels / 750);
const unreadOriginalTokens = originalPatchBudget;

/**
 * The tokens an image in a prompt is held at: a base64 payload (a `data:` URL or Anthropic's bare base64) by
 * the size its header states (`imageSize`, `imageTokenBound`), else, like a URL, at the allowance for an image
 * of unknown size; a URL at its bytes when it spends more.
 */
export function imageTokens(value: string, detail: string | undefined, base64: boolean): number {
  const size = base64 ? imageSize(value) : undefined;
  if (size) return imageTokenBound(size.width, size.height, detail);
  const allowance = detail === "original" ? unreadOriginalTokens : unreadImageTokens;
  return base64 ? allowance : Math.max(Buffer.byteLength(value, "utf8"), allowance);
}
