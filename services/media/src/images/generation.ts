import { parseImageSize, type ImageGenerationRequest } from "@switchyard/contracts";
import { endUser, type Candidate } from "@switchyard/upstream";
import type { Response } from "express";
import { imageTokensBound, mediaCost, referenceTokens, type MediaUsage } from "../cost.js";
import type { ImageCall, ImageProvider, ImageUsage, ReferenceImage, UpstreamImages } from "../providers/types.js";
import { recordGeneration } from "../record.js";
import { billedUsd, chargeFor, runRecord, type MediaRun, type Served } from "../run.js";

/** The tier a request asks for: its `resolution`, or its `size` tier; explicit pixels are served as given. */
function imageResolutionOf(request: ImageGenerationRequest): ImageCall["resolution"] {
  const size = request.size === undefined ? undefined : parseImageSize(request.size);
  if (size && "width" in size) return undefined;
  return size?.tier ?? request.resolution;
}

/** The provider-neutral call: a size tier is a resolution, explicit pixels stay pixels, `auto` means no ratio. */
export function imageCall(request: ImageGenerationRequest, references: ReferenceImage[], options: Record<string, unknown>, workspaceId: string): ImageCall {
  const size = request.size === undefined ? undefined : parseImageSize(request.size);
  return {
    prompt: request.prompt,
    n: request.n ?? 1,
    aspectRatio: request.aspect_ratio === "auto" ? undefined : request.aspect_ratio,
    background: request.background,
    outputFormat: request.output_format,
    // Compression means nothing to PNG.
    outputCompression: request.output_format === "jpeg" || request.output_format === "webp" ? request.output_compression : undefined,
    quality: request.quality,
    resolution: imageResolutionOf(request),
    size: size && "width" in size ? size : undefined,
    seed: request.seed,
    moderation: request.moderation,
    user: request.user === undefined ? undefined : endUser(workspaceId, request.user),
    references,
    options,
  };
}

/** Why an image wire format cannot serve this request; undefined when it can. */
export function unfitFor(request: ImageGenerationRequest) {
  return (provider: ImageProvider): string | undefined => {
    const n = request.n ?? 1;
    if (n > provider.maxImages) return provider.maxImages === 1 ? "makes one image per request (n must be 1)" : `makes at most ${provider.maxImages} images per request`;
    if (request.output_format && !provider.outputFormats.includes(request.output_format)) return `cannot produce ${request.output_format}`;
    if (request.input_references?.length && !provider.references) return "takes no input_references";
    const resolution = imageResolutionOf(request);
    if (resolution && !provider.resolutions.includes(resolution)) return `makes no ${resolution} images (it makes ${provider.resolutions.join(", ")})`;
    if (request.moderation === "low" && !provider.moderation) return "has no moderation setting";
    return undefined;
  };
}

/** The most one attempt can cost: every image at its price and its token bound, every reference, the prompt. */
export const worstCase = (call: ImageCall) => (c: Candidate) =>
  mediaCost(c.endpoint.pricing, {
    images: call.n,
    references: call.references.length,
    promptTokens: Buffer.byteLength(call.prompt) + call.references.length * referenceTokens,
    completionTokens: call.n * (c.endpoint.max_completion_tokens ?? imageTokensBound),
  });

/** A 1K image's tokens: 1,290 on Gemini, 1,056 from gpt-image-1 at medium quality. */
const typicalImageTokens = 1290;

/** An image's estimated completion tokens on an endpoint: typical, or the endpoint's limit when it is lower. */
const estimatedImageTokens = (c: Candidate) => Math.min(typicalImageTokens, c.endpoint.max_completion_tokens ?? imageTokensBound);

/** The prompt's estimated tokens: a token per 4 characters, and every reference at a chat image's tokens. */
const estimatedPromptTokens = (call: ImageCall) => Math.ceil(call.prompt.length / 4) + call.references.length * referenceTokens;

/** What an attempt asks of its provider, estimated: every image at its price and typical tokens, every reference, the prompt. */
export const askedUsage = (call: ImageCall) => (c: Candidate): MediaUsage => ({
  images: call.n,
  references: call.references.length,
  promptTokens: estimatedPromptTokens(call),
  completionTokens: call.n * estimatedImageTokens(c),
});

/**
 * Usage to charge for `images` delivered on endpoint `c`: the provider's tokens, or estimated ones (marked)
 * when it reported none, each image at its typical tokens.
 */
export function imageUsage(call: ImageCall, c: Candidate, images: number, reported: ImageUsage | undefined): { usage: MediaUsage; estimated: boolean } {
  const promptTokens = reported?.promptTokens ?? estimatedPromptTokens(call);
  const completionTokens = reported?.completionTokens ?? images * estimatedImageTokens(c);
  return { usage: { images, references: call.references.length, promptTokens, completionTokens }, estimated: reported === undefined };
}

/**
 * Charges a finished generation and answers with the buffered JSON: the first `n` images, those its hold
 * covers; a provider's images beyond them are neither handed out nor charged.
 */
export async function sendImages(run: MediaRun<ImageProvider>, call: ImageCall, served: Served, result: UpstreamImages, res: Response): Promise<void> {
  const images = result.images.slice(0, call.n);
  const { usage, estimated } = imageUsage(call, served.candidate, images.length, result.usage);
  const charge = chargeFor(run, served, usage);
  await recordGeneration(run.deps, { ...runRecord(run, served.candidate, false), status: "completed", usage, usageEstimated: estimated, charge });
  res.json({
    created: Math.floor(Date.now() / 1000),
    data: images.map((image) => ({ b64_json: image.b64, media_type: image.mediaType })),
    usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens, cost: billedUsd(served, charge), is_byok: served.candidate.byokKey !== undefined },
  });
}

