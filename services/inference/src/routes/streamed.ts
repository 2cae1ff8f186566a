import type { Response } from "express";
import type { UpstreamUsage } from "../providers/types.js";
import { normalizeFinishReason, usageBody } from "../responses.js";
import { sseWriter } from "../sse.js";
import { accepted, type ChatContext } from "./chat-completions.js";
import { accountAbandoned, finish, metadataFor } from "./finish.js";

const keepAliveMs = 2000;

/**
 * A streamed completion. Until the first byte every failure may fall back to the next endpoint and ends as
 * a plain HTTP error; after it, a failure is one in-band error frame and spend is still accounted.
 */
export async function streamedCompletion(context: ChatContext, res: Response): Promise<void> {
  const sse = sseWriter(res, { "x-generation-id": context.generationId });
  const keepAlive = setInterval(() => sse.comment("OPENROUTER PROCESSING"), keepAliveMs);
  const created = Math.floor(Date.now() / 1000);
  let attempt;
  try {
    attempt = await accepted(context, (provider, target, body) => provider.stream(body, target, context.signal));
  } catch (error) {
    clearInterval(keepAlive);
    accountAbandoned(context);
    if (!sse.started) throw error;
    const failure = error as { status?: number; message?: string };
    sse.data({ id: context.generationId, object: "chat.completion.chunk", created, model: context.requested, choices: [{ index: 0, delta: {}, finish_reason: "error" }], error: { code: failure.status ?? 502, message: failure.message ?? "Provider returned error" } });
    res.end();
    return;
  }
  const { result: chunks, candidate } = attempt;
  const frame = { id: context.generationId, object: "chat.completion.chunk", created, model: candidate.model };
  // Debugging aid: the exact body the serving endpoint received, before any of its output.
  if (context.request.debug?.echo_upstream_body) sse.data({ ...frame, choices: [], debug: { echo_upstream_body: context.sentBody.get(candidate) } });
  let text = "";
  let usage: UpstreamUsage | undefined;
  let fingerprint: string | null = null;
  let serviceTier: string | null = null;
  let nativeFinish: string | null = null;
  let firstTokenMs: number | null = null;
  let status: "completed" | "error" | "cancelled" = "completed";
  try {
    for await (const chunk of chunks) {
      clearInterval(keepAlive);
      usage = chunk.usage ?? usage;
      fingerprint ??= chunk.systemFingerprint;
      serviceTier ??= chunk.serviceTier;
      if (chunk.choices.length === 0) continue;
      firstTokenMs ??= Math.round(performance.now() - context.started);
      const choices = chunk.choices.map((choice, i) => {
        const delta = (choice.delta ?? {}) as { content?: unknown };
        if (typeof delta.content === "string") text += delta.content;
        if (choice.finish_reason) nativeFinish = String(choice.finish_reason);
        return {
          ...choice,
          index: typeof choice.index === "number" ? choice.index : i,
          delta,
          finish_reason: normalizeFinishReason(choice.finish_reason),
          native_finish_reason: choice.finish_reason ?? null,
        };
      });
      sse.data({ ...frame, ...(fingerprint ? { system_fingerprint: fingerprint } : {}), ...(serviceTier ? { service_tier: serviceTier } : {}), choices });
    }
  } catch (error) {
    status = context.signal.aborted && !context.timedOut() ? "cancelled" : "error";
    if (status === "error") {
      context.deps.logger.warn({ err: error, provider: candidate.endpoint.provider, generationId: context.generationId }, "stream failed after its first byte");
      sse.data({ ...frame, choices: [{ index: 0, delta: {}, finish_reason: "error" }], error: { code: 502, message: "Provider returned error mid-stream" } });
    }
  } finally {
    clearInterval(keepAlive);
  }
  // Whatever happened after the first byte was real work: it is priced and recorded, estimated if need be.
  const accounted = finish(context, {
    candidate,
    status,
    usage,
    completionText: text,
    upstreamId: null,
    finishReason: status === "completed" ? normalizeFinishReason(nativeFinish) : status === "error" ? "error" : null,
    nativeFinishReason: nativeFinish,
    serviceTier,
    firstTokenMs,
  });
  if (status === "completed") {
    sse.data({ ...frame, ...(fingerprint ? { system_fingerprint: fingerprint } : {}), choices: [{ index: 0, delta: {}, finish_reason: null }], usage: usageBody(accounted), ...metadataFor(context, candidate) });
    sse.done();
  }
  res.end();
}
