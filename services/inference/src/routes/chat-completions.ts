import { randomBytes } from "node:crypto";
import {
  chatCompletionRequest,
  legacyMetadataHeader,
  metadataHeader,
  sessionIdHeader,
  type ChatCompletionRequest,
} from "@switchyard/contracts";
import { badRequest, callerOf, forbidden, HttpError, parseInput, type Caller } from "@switchyard/runtime";
import type { Request, RequestHandler } from "express";
import type { InferenceDeps } from "../deps.js";
import type { Attempt } from "../generations/store.js";
import { upstreamBody } from "../request-body.js";
import { requestedParameters } from "../request-body.js";
import { firstAccepting } from "../routing/attempts.js";
import { orderCandidates, type Candidate } from "../routing/candidates.js";
import { upstreamFailure } from "../routing/failure.js";
import { bufferedCompletion } from "./buffered.js";
import { streamedCompletion } from "./streamed.js";

export interface ChatContext {
  deps: InferenceDeps;
  caller: Caller;
  request: ChatCompletionRequest;
  generationId: string;
  requested: string;
  candidates: Candidate[];
  guardrailIds: string[];
  body: Record<string, unknown>;
  attempts: Attempt[];
  signal: AbortSignal;
  timedOut: () => boolean;
  started: number;
  wantsMetadata: boolean;
  sessionId: string | undefined;
  requestId: string | null;
}

const header = (req: Request, name: string) => {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
};

/** `POST /chat/completions`: validate, resolve models to endpoints, try them in order, answer, account. */
export const chatCompletionsRoute =
  (deps: InferenceDeps): RequestHandler =>
  async (req, res) => {
    const caller = callerOf(res);
    if (caller.management) throw forbidden("Management keys cannot be used for inference; use an inference key");
    const request = parseInput(chatCompletionRequest, req.body, "body");
    const models = [...new Set([request.model, ...(request.models ?? [])].filter((m): m is string => typeof m === "string"))];
    if (models.length === 0) throw badRequest("Invalid body: model: a model or a models list is required");
    const sessionId = request.session_id ?? header(req, sessionIdHeader);
    const host = (header(req, "x-forwarded-host") ?? header(req, "host") ?? "").split(",")[0]!.trim().replace(/:\d+$/, "");

    const candidates: Candidate[] = [];
    const reasons: string[] = [];
    const guardrailIds = new Set<string>();
    let preset: { system_prompt: string; config: Record<string, unknown> } | undefined;
    for (const model of models) {
      const resolved = await deps.resolve({ model, keyHash: caller.keyHash, workspaceId: caller.workspaceId, organizationId: caller.organizationId, host });
      if (resolved.preset && !preset) preset = resolved.preset;
      for (const id of resolved.guardrail_ids) guardrailIds.add(id);
      const ordered = orderCandidates(resolved, {
        preferences: request.provider ?? undefined,
        sessionId,
        requestedParameters: requestedParameters(request),
        coolingDown: deps.cooldowns.coolingDown,
      });
      candidates.push(...ordered.candidates);
      reasons.push(...resolved.excluded.map((e) => `${resolved.model} on ${e.provider}: ${e.reason}`), ...ordered.dropped.map((d) => `${resolved.model} on ${d}`));
    }
    if (candidates.length === 0) {
      throw new HttpError("not_found", `No endpoints available for ${models.join(", ")}: ${reasons.join("; ") || "none configured"}`);
    }

    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort(new Error("client disconnected"));
    });
    const deadline = AbortSignal.timeout(deps.requestTimeoutMs);
    const generationId = `gen-${Math.floor(Date.now() / 1000)}-${randomBytes(10).toString("hex")}`;
    res.setHeader("X-Generation-Id", generationId);
    const context: ChatContext = {
      deps,
      caller,
      request,
      generationId,
      requested: models[0]!,
      candidates,
      guardrailIds: [...guardrailIds],
      body: upstreamBody(request, caller.workspaceId, preset),
      attempts: [],
      signal: AbortSignal.any([abort.signal, deadline]),
      timedOut: () => deadline.aborted,
      started: performance.now(),
      wantsMetadata: (header(req, metadataHeader) ?? header(req, legacyMetadataHeader)) === "enabled",
      sessionId,
      requestId: header(req, "x-request-id") ?? null,
    };
    if (request.stream) await streamedCompletion(context, res);
    else await bufferedCompletion(context, res);
  };

/** Tries the candidates; when none accepts, the caller gets the most telling failure. */
export async function accepted<T>(context: ChatContext, call: Parameters<typeof firstAccepting<T>>[3]) {
  try {
    return await firstAccepting(context.candidates, { env: context.deps.env, cooldowns: context.deps.cooldowns, logger: context.deps.logger, signal: context.signal }, context.attempts, call);
  } catch (error) {
    throw upstreamFailure(error, context.timedOut());
  }
}
