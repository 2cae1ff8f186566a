import type { ImageResolution } from "@switchyard/contracts";

export type ImageFormat = "png" | "jpeg" | "webp" | "svg";

/**
 * What an image wire format can do. Media turns away requests beyond it before calling a provider, and the
 * catalog describes image endpoints from it (`GET /images/models`): one table, so discovery cannot promise
 * what generation refuses.
 */
export interface ImageWireFormat {
  /** Most images one request may ask for; an endpoint below the request's `n` is not tried. */
  readonly maxImages: number;
  readonly outputFormats: readonly ImageFormat[];
  /** Whether it can take reference images (image-to-image). */
  readonly references: boolean;
  /** The resolution tiers it can make; a request for another is not sent to it. */
  readonly resolutions: readonly ImageResolution[];
  /** Whether it takes `moderation` (its strictness: `auto` or `low`). */
  readonly moderation: boolean;
  /** Request fields it passes on; the others are dropped, not refused. */
  readonly honours: readonly ("quality" | "background" | "output_compression" | "seed")[];
  /** Native streaming: partial images as they are drawn. Without it `stream: true` gets the buffered JSON answer. */
  readonly streams: boolean;
}

/** OpenAI's Images API (GPT-image): up to 10 images, edits from references, streamed partial images. */
export const openAiImageFormat: ImageWireFormat = {
  maxImages: 10,
  outputFormats: ["png", "jpeg", "webp", "svg"],
  references: true,
  // GPT-image sizes (1024x1024, 1536x1024, 1024x1536) are all 1K; explicit pixels pass as given.
  resolutions: ["1K"],
  moderation: true,
  honours: ["quality", "background", "output_compression"],
  streams: true,
};

/** Gemini's native image generation: one PNG per request, 1K to 4K, seeded. */
export const googleImageFormat: ImageWireFormat = {
  maxImages: 1,
  outputFormats: ["png"],
  references: true,
  // Gemini makes nothing smaller than 1K.
  resolutions: ["1K", "2K", "4K"],
  moderation: false,
  honours: ["seed"],
  streams: false,
};

/** Image wire formats by the catalog's adapter name; an adapter not here generates no images. */
export const imageWireFormats: Readonly<Record<string, ImageWireFormat>> = {
  openai: openAiImageFormat,
  "openai-compatible": openAiImageFormat,
  google: googleImageFormat,
};
