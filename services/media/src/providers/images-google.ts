import { googleImageFormat, postJson, readAnswer, UpstreamError } from "@switchyard/upstream";
import { z } from "zod";
import type { ImageCall, ImageProvider } from "./types.js";

/** The aspect ratios Gemini draws; the spec's others are clamped to the nearest by their value. */
const ratios = ["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"];
const valueOf = (ratio: string) => {
  const [w, h] = ratio.split(":").map(Number) as [number, number];
  return w / h;
};

/** Nearest on a log scale, so 1:4 and 4:1 are as far from 1:1 as each other. */
export function nearestRatio(value: number): string {
  let best = ratios[0]!;
  for (const ratio of ratios) if (Math.abs(Math.log(valueOf(ratio) / value)) < Math.abs(Math.log(valueOf(best) / value))) best = ratio;
  return best;
}

const imageSizes = { "1K": "1K", "2K": "2K", "4K": "4K" } as const;

function imageConfig(call: ImageCall): Record<string, string> {
  const config: Record<string, string> = {};
  if (call.size) {
    config.aspectRatio = nearestRatio(call.size.width / call.size.height);
    const longEdge = Math.max(call.size.width, call.size.height);
    config.imageSize = longEdge < 1536 ? "1K" : longEdge < 3072 ? "2K" : "4K";
    return config;
  }
  if (call.aspectRatio) config.aspectRatio = nearestRatio(valueOf(call.aspectRatio));
  if (call.resolution && call.resolution !== "512") config.imageSize = imageSizes[call.resolution];
  return config;
}

const answer = z.looseObject({
  candidates: z
    .array(
      z.looseObject({
        content: z.looseObject({ parts: z.array(z.looseObject({ text: z.string().nullish(), inlineData: z.looseObject({ mimeType: z.string(), data: z.string() }).nullish() })).nullish() }).nullish(),
        finishReason: z.string().nullish(),
      }),
    )
    .nullish(),
  promptFeedback: z.looseObject({ blockReason: z.string().nullish() }).nullish(),
  usageMetadata: z.looseObject({ promptTokenCount: z.number().int().nullish(), candidatesTokenCount: z.number().int().nullish() }).nullish(),
});

/**
 * Gemini's native image generation (`generateContent` answering with inline image parts): one image per
 * request, references as inline parts, aspect ratio and size through `imageConfig`.
 */
export const googleImages: ImageProvider = {
  ...googleImageFormat,
  async generate(call, target, signal) {
    const generationConfig: Record<string, unknown> = { responseModalities: ["TEXT", "IMAGE"], imageConfig: imageConfig(call), ...call.options };
    if (call.seed !== undefined) generationConfig.seed = call.seed;
    const body = {
      contents: [{ role: "user", parts: [{ text: call.prompt }, ...call.references.map((r) => ({ inlineData: { mimeType: r.mediaType, data: r.bytes.toString("base64") } }))] }],
      generationConfig,
    };
    const res = await postJson(target.provider, `${target.baseUrl.replace(/\/$/, "")}/models/${target.upstreamModel}:generateContent`, target.apiKey ? { "x-goog-api-key": target.apiKey } : {}, body, signal);
    const parsed = answer.safeParse(await readAnswer(target.provider, res, signal));
    if (!parsed.success) throw new UpstreamError(`${target.provider} sent a response that is not an image generation`, 502, true);
    const a = parsed.data;
    const candidate = a.candidates?.[0];
    const images = (candidate?.content?.parts ?? []).flatMap((part) => (part.inlineData ? [{ b64: part.inlineData.data, mediaType: part.inlineData.mimeType }] : []));
    if (images.length === 0) {
      const reason = a.promptFeedback?.blockReason ?? candidate?.finishReason ?? "no image in the answer";
      throw new UpstreamError(`${target.provider} made no image: ${reason}`, 400, false);
    }
    const usage = a.usageMetadata;
    return {
      images,
      usage: usage ? { promptTokens: usage.promptTokenCount ?? 0, completionTokens: usage.candidatesTokenCount ?? 0 } : undefined,
    };
  },
};
