import { z } from "zod";
import { sessionId, traceConfig } from "./shared.js";

export const imageAspectRatios = [
  "1:1", "1:2", "1:4", "1:8", "2:1", "2:3", "3:2", "3:4", "4:1", "4:3", "4:5", "5:4", "8:1",
  "9:16", "16:9", "9:19.5", "19.5:9", "9:20", "20:9", "9:21", "21:9", "auto",
] as const;
export const imageAspectRatio = z.enum(imageAspectRatios);
export const imageResolution = z.enum(["512", "1K", "2K", "4K"]);
export type ImageResolution = z.infer<typeof imageResolution>;
export const imageOutputFormat = z.enum(["png", "jpeg", "webp", "svg"]);
export const imageQuality = z.enum(["auto", "low", "medium", "high"]);
export const imageBackground = z.enum(["auto", "transparent", "opaque"]);
export const imageModeration = z.enum(["auto", "low"]);
/** Most reference images one request may carry. */
export const maxInputReferences = 16;

const sizeTiers = ["2K", "4K"] as const;
const pixelSize = /^([1-9]\d{0,4})x([1-9]\d{0,4})$/;

export type ImageSize = { tier: (typeof sizeTiers)[number] } | { width: number; height: number };

/** `size` is either a resolution tier or explicit `<width>x<height>` pixels. */
export function parseImageSize(size: string): ImageSize | undefined {
  if ((sizeTiers as readonly string[]).includes(size)) return { tier: size as (typeof sizeTiers)[number] };
  const match = pixelSize.exec(size);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : undefined;
}

/**
 * The tier explicit pixels fall in, by long edge: 1K covers 1024 up to 2048 exclusive, which holds
 * every aspect ratio's 1K size (1024x1024 through 1584x672), and likewise for the others.
 */
export function resolutionOfPixels(width: number, height: number): ImageResolution {
  const longEdge = Math.max(width, height);
  if (longEdge < 1024) return "512";
  if (longEdge < 2048) return "1K";
  if (longEdge < 4096) return "2K";
  return "4K";
}

/** Pixel sizes are rounded to multiples of 8 or 16 by providers, so 2% of slack is allowed. */
export function aspectRatioMatches(ratio: string, width: number, height: number): boolean {
  if (ratio === "auto") return true;
  const [w, h] = ratio.split(":").map(Number);
  if (!w || !h) return false;
  const expected = w / h;
  return Math.abs(width / height - expected) / expected <= 0.02;
}

const imageUrl = z
  .string()
  .refine(
    (url) => /^data:image\/[a-z0-9.+-]+;base64,/i.test(url) || /^https?:\/\//i.test(url),
    "must be a base64 data URL or an http(s) URL",
  );

export const inputReference = z.object({ type: z.literal("image_url"), image_url: z.object({ url: imageUrl }) });

/** Routing preferences for image models; `options` is passed to the named provider untouched. */
const imageProvider = z.looseObject({
  order: z.array(z.string()).nullable().optional(),
  only: z.array(z.string()).nullable().optional(),
  ignore: z.array(z.string()).nullable().optional(),
  allow_fallbacks: z.boolean().nullable().optional(),
  options: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
});

/** `POST /images`. Media's route refuses a field it does not handle (also `models`, and `response_format: "b64_json"`), naming it. */
export const imageGenerationRequest = z
  .looseObject({
    model: z.string().min(1, "must not be empty").optional().describe("Left out: the workspace's default_image_model"),
    prompt: z.string().min(1, "must not be empty"),
    aspect_ratio: imageAspectRatio.optional(),
    background: imageBackground.optional(),
    input_references: z.array(inputReference).max(maxInputReferences, `must have at most ${maxInputReferences} items`).optional(),
    n: z.number().int().min(1).max(10).optional(),
    output_compression: z.number().int().min(0).max(100).optional().describe("webp and jpeg only"),
    output_format: imageOutputFormat.optional().describe("svg markup comes back base64-encoded in b64_json"),
    provider: imageProvider.optional(),
    quality: imageQuality.optional(),
    moderation: imageModeration.optional().describe("low relaxes the provider's content moderation (OpenAI-format endpoints)"),
    resolution: imageResolution.optional(),
    seed: z.number().int().optional(),
    size: z
      .string()
      .refine((size) => parseImageSize(size) !== undefined, "must be 2K, 4K or <width>x<height>")
      .optional(),
    stream: z.boolean().optional(),
    session_id: sessionId.optional(),
    trace: traceConfig.optional(),
    user: z.string().max(256).optional().describe("End-user id: providers that take one get a per-workspace hash of it"),
  })
  .superRefine((request, ctx) => {
    const format = request.output_format;
    if (request.background === "transparent" && format !== undefined && format !== "png" && format !== "webp") {
      ctx.addIssue({ code: "custom", path: ["background"], message: "transparent requires output_format png or webp" });
    }
    const size = request.size === undefined ? undefined : parseImageSize(request.size);
    if (!size) return;
    if ("tier" in size) {
      if (request.resolution !== undefined && request.resolution !== size.tier) {
        ctx.addIssue({ code: "custom", path: ["resolution"], message: `conflicts with size ${size.tier}` });
      }
      return;
    }
    // Explicit pixels are authoritative: anything alongside them must agree.
    const pixels = `${size.width}x${size.height}`;
    if (request.resolution !== undefined && request.resolution !== resolutionOfPixels(size.width, size.height)) {
      ctx.addIssue({ code: "custom", path: ["resolution"], message: `does not match size ${pixels}` });
    }
    if (request.aspect_ratio !== undefined && !aspectRatioMatches(request.aspect_ratio, size.width, size.height)) {
      ctx.addIssue({ code: "custom", path: ["aspect_ratio"], message: `does not match size ${pixels}` });
    }
  });
export type ImageGenerationRequest = z.infer<typeof imageGenerationRequest>;

export const imageUsage = z.object({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
  cost: z.number().min(0),
});

export const imageGenerationResponse = z.object({
  created: z.number().int().describe("Unix seconds"),
  data: z.array(z.object({ b64_json: z.string(), media_type: z.string().optional() })),
  usage: imageUsage.optional(),
});
export type ImageGenerationResponse = z.infer<typeof imageGenerationResponse>;

/** SSE events of `stream: true`: partial images, then the completed image (or an error). */
export const imageStreamEvent = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("image_generation.partial_image"),
    b64_json: z.string(),
    partial_image_index: z.number().int().min(0),
  }),
  z.object({
    type: z.literal("image_generation.completed"),
    b64_json: z.string(),
    created: z.number().int(),
    media_type: z.string().optional(),
    usage: imageUsage.optional(),
  }),
  z.object({
    type: z.literal("error"),
    error: z.object({ message: z.string(), code: z.string().nullable().optional(), type: z.string().nullable().optional() }),
  }),
]);
export type ImageStreamEvent = z.infer<typeof imageStreamEvent>;
