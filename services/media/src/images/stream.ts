import { metrics } from "@switchyard/runtime";
import type { Response } from "express";
import type { GeneratedImage, ImageCall, ImageProvider, ImageUsage } from "../providers/types.js";
import { recordGeneration } from "../record.js";
import { imageUsage, sendImages } from "./generation.js";
import { billedUsd, chargeFor, firstAccepted, runRecord, type AttemptCosts, type MediaRun } from "../run.js";

const keepAliveMs = 10_000;
const frame = (event: Record<string, unknown>) => `data: ${JSON.stringify(event)}\n\n`;

/**
 * `stream: true`: an endpoint that streams natively sends partial images as SSE events, then one
 * `image_generation.completed` event per image (the last carries usage), then `[DONE]`. An endpoint that
 * does not stream answers with the buffered JSON, as the spec allows. A failure after the first event is
 * one `error` event and the end of the stream; what was produced until then is charged. A client that
 * leaves before the stream ends is charged what the provider was asked to make, as one that leaves before
 * it starts is (see `firstAccepted`). Images beyond `n` are neither sent nor charged: the hold covers `n`.
 */
export async function streamImages(
  run: MediaRun<ImageProvider>,
  call: ImageCall,
  callFor: (slug: string) => ImageCall,
  costs: AttemptCosts,
  res: Response,
): Promise<void> {
  const { result, ...served } = await firstAccepted(run, costs, async (provider, target, c, { signal }) =>
    provider.stream
      ? { kind: "stream" as const, parts: await provider.stream(callFor(c.endpoint.provider), target, signal) }
      : { kind: "buffered" as const, images: await provider.generate(callFor(c.endpoint.provider), target, signal) },
  );
  if (result.kind === "buffered") return sendImages(run, call, served, result.images, res);

  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  const keepAlive = setInterval(() => res.write(": OPENROUTER PROCESSING\n\n"), keepAliveMs);
  const images: GeneratedImage[] = [];
  let usage: ImageUsage | undefined;
  let failure: string | undefined;
  let firstImage: number | undefined;
  let ended = false;
  try {
    for await (const part of result.parts) {
      if (part.type !== "usage") firstImage ??= performance.now();
      if (part.type === "partial") res.write(frame({ type: "image_generation.partial_image", b64_json: part.b64, partial_image_index: part.index }));
      else if (part.type === "image") {
        if (images.length < call.n) images.push(part.image);
      } else usage = part.usage;
    }
    ended = true;
  } catch (error) {
    failure = run.signal.aborted ? undefined : (error as Error).message;
    if (!run.signal.aborted) run.deps.logger.warn({ err: failure, generationId: run.generationId }, "image stream failed mid-way");
  } finally {
    clearInterval(keepAlive);
  }
  // Its client left while the provider worked (not the deadline): nothing says what was made.
  const left = !ended && run.signal.aborted && !run.timedOut();
  const used = left ? { usage: costs.asked(served.candidate), estimated: true } : imageUsage(call, served.candidate, images.length, usage);
  const charge = chargeFor(run, served, used.usage);
  const status = run.signal.aborted ? "cancelled" : failure !== undefined ? "error" : "completed";
  metrics.streamDuration.observe({ service: "media", status }, (performance.now() - run.started) / 1000);
  const firstOutputMs = firstImage === undefined ? undefined : Math.round(firstImage - run.started);
  await recordGeneration(run.deps, { ...runRecord(run, served.candidate, true), firstOutputMs, status, usage: used.usage, usageEstimated: used.estimated, charge });
  if (res.writableEnded || res.destroyed) return;
  if (status !== "completed") {
    res.end(frame({ type: "error", error: { message: `Provider returned error: ${failure ?? "stream ended"}`, code: "502" } }));
    return;
  }
  const created = Math.floor(Date.now() / 1000);
  const { promptTokens, completionTokens } = used.usage;
  const total = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens, cost: billedUsd(served, charge), is_byok: served.candidate.byokKey !== undefined };
  images.forEach((image, index) => {
    const last = index === images.length - 1;
    res.write(frame({ type: "image_generation.completed", b64_json: image.b64, created, media_type: image.mediaType, ...(last ? { usage: total } : {}) }));
  });
  res.end("data: [DONE]\n\n");
}
