import { FormData, openAiImageFormat, post, readAnswer, sseData, UpstreamError, type UpstreamResponse } from "@switchyard/upstream";
import { z } from "zod";
import { streamEvent } from "./stream-events.js";
import type { GeneratedImage, ImageCall, ImageProvider, ImageStreamPart, ImageUsage, UpstreamTarget } from "./types.js";

const usage = z.looseObject({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() });

const answer = z.looseObject({
  data: z.array(z.looseObject({ b64_json: z.string().nullish(), url: z.string().nullish() })).min(1),
  output_format: z.string().nullish(),
  usage: usage.nullish(),
});

const event = z.looseObject({
  type: z.string(),
  b64_json: z.string().nullish(),
  partial_image_index: z.number().int().nullish(),
  output_format: z.string().nullish(),
  usage: usage.nullish(),
  error: z.looseObject({ message: z.string().nullish() }).nullish(),
});

const mediaTypes: Record<string, string> = { png: "image/png", jpeg: "image/jpeg", webp: "image/webp", svg: "image/svg+xml" };

/** Servers that draw vectors answer SVG markup; it is told apart by its first bytes, whatever was asked. */
function imageOf(b64: string, format: string | undefined): GeneratedImage {
  const head = Buffer.from(b64.slice(0, 64), "base64").toString("utf8").trimStart();
  if (head.startsWith("<svg") || head.startsWith("<?xml")) return { b64, mediaType: "image/svg+xml" };
  return { b64, mediaType: mediaTypes[format ?? "png"] ?? "image/png" };
}

/** GPT-image sizes: explicit pixels as given, else the size nearest the aspect ratio's shape. */
function sizeOf(call: ImageCall): string | undefined {
  if (call.size) return `${call.size.width}x${call.size.height}`;
  if (!call.aspectRatio) return undefined;
  const [w, h] = call.aspectRatio.split(":").map(Number) as [number, number];
  return w === h ? "1024x1024" : w > h ? "1536x1024" : "1024x1536";
}

/** The request's fields, only those the call sets, then the provider's own options. */
function fields(call: ImageCall, target: UpstreamTarget, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { model: target.upstreamModel, prompt: call.prompt, n: call.n };
  const size = sizeOf(call);
  if (size) body.size = size;
  if (call.quality) body.quality = call.quality;
  if (call.background) body.background = call.background;
  if (call.outputFormat) body.output_format = call.outputFormat;
  if (call.outputCompression !== undefined) body.output_compression = call.outputCompression;
  if (call.moderation) body.moderation = call.moderation;
  if (call.user) body.user = call.user;
  if (stream) body.stream = true;
  // Options add what the request does not decide; they never replace its fields.
  for (const [key, value] of Object.entries(call.options)) if (!(key in body) && value !== undefined && value !== null) body[key] = value;
  if (stream && body.partial_images === undefined) body.partial_images = 2;
  return body;
}

/** References make it an edit: `/images/edits` takes them as `image[]` files beside the same fields. */
function request(call: ImageCall, target: UpstreamTarget, stream: boolean, signal: AbortSignal): Promise<UpstreamResponse> {
  const base = target.baseUrl.replace(/\/$/, "");
  const auth: Record<string, string> = target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {};
  const body = fields(call, target, stream);
  if (call.references.length === 0) {
    return post(target.provider, `${base}/images/generations`, { ...auth, "content-type": "application/json" }, JSON.stringify(body), signal);
  }
  const form = new FormData();
  call.references.forEach((image, index) => {
    const extension = image.mediaType.split("/")[1] ?? "png";
    form.append("image[]", new Blob([image.bytes], { type: image.mediaType }), `reference-${index}.${extension}`);
  });
  for (const [key, value] of Object.entries(body)) form.append(key, typeof value === "object" ? JSON.stringify(value) : String(value));
  return post(target.provider, `${base}/images/edits`, auth, form, signal);
}

const toUsage = (u: z.infer<typeof usage>): ImageUsage => ({ promptTokens: u.input_tokens, completionTokens: u.output_tokens });

async function* parts(res: UpstreamResponse, provider: string, format: string | undefined): AsyncGenerator<ImageStreamPart> {
  let total: ImageUsage | undefined;
  for await (const data of sseData(res.body)) {
    const e = streamEvent(data, event, provider);
    if (e.type.endsWith(".partial_image") && e.b64_json) yield { type: "partial", b64: e.b64_json, index: e.partial_image_index ?? 0 };
    if (e.type.endsWith(".completed")) {
      if (!e.b64_json) throw new UpstreamError(`${provider} completed an image without its data`, 502, false);
      yield { type: "image", image: imageOf(e.b64_json, e.output_format ?? format) };
      if (e.usage) {
        const u = toUsage(e.usage);
        total = { promptTokens: (total?.promptTokens ?? 0) + u.promptTokens, completionTokens: (total?.completionTokens ?? 0) + u.completionTokens };
      }
    }
  }
  if (total) yield { type: "usage", usage: total };
}

/**
 * OpenAI's Images API (GPT-image): generations, edits from up to 16 references, and streamed partial
 * images. Other servers of the same API (vector and self-hosted image servers) are reached the same way.
 */
export const openAiImages: ImageProvider = {
  ...openAiImageFormat,
  async generate(call, target, signal) {
    const res = await request(call, target, false, signal);
    const parsed = answer.safeParse(await readAnswer(target.provider, res, signal));
    if (!parsed.success) throw new UpstreamError(`${target.provider} sent a response that is not an image generation`, 502, true);
    const a = parsed.data;
    const images = a.data.map((item) => {
      // Provider URLs expire and would leak where images are made: only inline images are handed out.
      if (!item.b64_json) throw new UpstreamError(`${target.provider} answered with an image URL instead of its data`, 502, true);
      return imageOf(item.b64_json, a.output_format ?? call.outputFormat);
    });
    return { images, usage: a.usage ? toUsage(a.usage) : undefined };
  },
  async stream(call, target, signal) {
    const res = await request(call, target, true, signal);
    return parts(res, target.provider, call.outputFormat);
  },
};
