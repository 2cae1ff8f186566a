import {
  chatCompletionRequest,
  legacyMetadataHeader,
  metadataHeader,
  sessionIdHeader,
  type ChatCompletionRequest,
  type ResolvedModel,
} from "@switchyard/contracts";
import { badRequest, forbidden, HttpError, parseInput, type Caller } from "@switchyard/runtime";
import {
  enforceFindings,
  filterMessages,
  newGenerationId,
  orderCandidates,
  requestDeadline,
  requestFilters,
  upstreamFailure,
  withWorkspaceKeys,
  type AttemptSignal,
  type Candidate,
  type CompiledFilters,
  type Finding,
} from "@switchyard/upstream";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { InferenceDeps } from "../deps.js";
import type { Attempt, Attribution } from "../generations/store.js";
import { attributionOf, withPreset } from "../request-context.js";
import { requestedParameters, upstreamBody } from "../request-body.js";
import { dropUnsupported } from "../parameters.js";
import { activePlugins, compressMessages, type ActivePlugins } from "../plugins.js";
import type { ChatProvider, UpstreamTarget } from "../providers/types.js";
import { firstAccepting } from "../routing/attempts.js";
import { reserve } from "../spend/holds.js";
import { declaredTools } from "../tools/declared.js";
import { agentCompletion } from "./agent.js";
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
  /** The preset the request ran, if any. */
  presetId: string | null;
  attribution: Attribution;
  /** Its workspace broadcasts its generations. */
  broadcast: boolean;
  /** Its workspace logs inputs and outputs, and this request was sampled: its content is kept. */
  logContent: boolean;
  /** The guardrails' content filters, which every turn's new messages are scanned with too. */
  filters: CompiledFilters;
  /** What they redacted and flagged, recorded on the generation. */
  findings: Finding[];
  body: Record<string, unknown>;
  plugins: ActivePlugins;
  /** Parameters dropped for each tried endpoint because it does not support them. */
  dropped: Map<Candidate, string[]>;
  /** The exact body each tried endpoint was sent. */
  sentBody: Map<Candidate, Record<string, unknown>>;
  /** The worst case held for each tried endpoint: the most its generation is charged. */
  held: Map<Candidate, bigint>;
  /** The candidate whose request is under way, for accounting a request the client abandons. */
  inFlight: Candidate | undefined;
  attempts: Attempt[];
  signal: AbortSignal;
  timedOut: () => boolean;
  started: number;
  wantsMetadata: boolean;
  sessionId: string | undefined;
  requestId: string | null;
}

/** What the route reads of a request: its headers and its JSON body. */
export interface ChatHttpRequest {
  headers: IncomingHttpHeaders;
  body: unknown;
}

const header = (req: ChatHttpRequest, name: string) => {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
};

/** `POST /chat/completions`: validate, resolve models to endpoints, try them in order, answer, account. */
export const chatCompletionsRoute =
  (deps: InferenceDeps) =>
  async (req: ChatHttpRequest, res: ServerResponse, caller: Caller): Promise<void> => {
    if (caller.management) throw forbidden("Management keys cannot be used for inference; use an inference key");
    const host = (header(req, "x-forwarded-host") ?? header(req, "host") ?? "").split(",")[0]!.trim().replace(/:\d+$/, "");
    const resolve = (model: string) =>
      deps.resolve({
        model,
        ...(model ? {} : { defaultFor: "text" as const }),
        keyHash: caller.keyHash,
        workspaceId: caller.workspaceId,
        organizationId: caller.organizationId,
        host,
      });
    const { request, preset, presetRef } = await withPreset(parseInput(chatCompletionRequest, req.body, "body"), req.body, resolve);
    const plugins = activePlugins(request);
    // The `preset` field runs a preset like `@preset/<slug>`; a `model` given beside it wins over the preset's.
    const first = request.model ?? (request.models?.length ? undefined : presetRef);
    const models = [...new Set([first, ...(request.models ?? [])].filter((m): m is string => typeof m === "string"))];
    // None named: the workspace's default_text_model, which catalog resolves (an empty name asks for it).
    if (models.length === 0) models.push("");
    if (request.debug?.echo_upstream_body && !request.stream) throw badRequest("Invalid body: debug.echo_upstream_body: only available with stream: true");
    const sessionId = request.session_id ?? header(req, sessionIdHeader);

    const candidates: Candidate[] = [];
    const reasons: string[] = [];
    const guardrailIds = new Set<string>();
    let filters: CompiledFilters | undefined;
    let broadcast = false;
    let ioLogging: ResolvedModel["io_logging"] = null;
    const disabledTools = new Set<string>();
    let requested = models[0]!;
    for (const model of models) {
      const resolved = await resolve(model);
      requested ||= resolved.model;
      // Transcription and image-only models have their own endpoints; a chat request for one is a mistake in the body.
      if (!resolved.output_modalities.includes("text")) {
        throw badRequest(`Invalid body: model: ${resolved.model} is not a chat model (it outputs ${resolved.output_modalities.join(", ")})`);
      }
      for (const id of resolved.guardrail_ids) guardrailIds.add(id);
      // Guardrails apply to the key, so every model's resolution names the same filters.
      filters ??= requestFilters(resolved.content_filters);
      broadcast = resolved.broadcast;
      ioLogging = resolved.io_logging;
      for (const tool of resolved.disabled_server_tools) disabledTools.add(tool);
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
    // The workspace's own keys go first where it brought one.
    const keyed = await withWorkspaceKeys(candidates, (provider) => deps.providerKey(caller.workspaceId, provider));

    // Before any hold or provider call: a blocked prompt costs nothing, a redacted one is all a provider sees.
    const body = upstreamBody(request, caller.workspaceId, preset?.system_prompt);
    let findings: Finding[] = [];
    if (filters && !filters.empty && Array.isArray(body.messages)) {
      const filtered = filterMessages(filters, body.messages as Array<Record<string, unknown>>);
      enforceFindings(filtered.findings, "chat");
      body.messages = filtered.value;
      findings = filtered.findings;
    }

    const tools = declaredTools(request, { sandbox: deps.sandbox !== undefined, webSearch: deps.search !== undefined, disabled: [...disabledTools] });

    const { signal, timedOut } = requestDeadline(res, deps.requestTimeoutMs);
    const generationId = newGenerationId();
    res.setHeader("X-Generation-Id", generationId);
    const context: ChatContext = {
      deps,
      caller,
      request,
      generationId,
      requested,
      candidates: keyed,
      guardrailIds: [...guardrailIds],
      presetId: preset?.id ?? null,
      attribution: attributionOf(req, request),
      broadcast,
      logContent: ioLogging !== null && Math.random() < ioLogging.sampling_rate,
      filters: filters!,
      findings,
      body,
      plugins,
      dropped: new Map(),
      sentBody: new Map(),
      held: new Map(),
      inFlight: undefined,
      attempts: [],
      signal,
      timedOut,
      started: performance.now(),
      wantsMetadata: (header(req, metadataHeader) ?? header(req, legacyMetadataHeader)) === "enabled",
      sessionId,
      requestId: header(req, "x-request-id") ?? null,
    };
    if (tools) await agentCompletion(context, tools, res);
    else if (request.stream) await streamedCompletion(context, res);
    else await bufferedCompletion(context, res);
  };

/**
 * The body one endpoint gets: without the sampling parameters it does not support, and with the middle
 * of the conversation trimmed to its context window when context compression is on.
 */
export function bodyFor(context: ChatContext, candidate: Candidate): Record<string, unknown> {
  const { body, dropped } = dropUnsupported(context.body, candidate.endpoint.supported_parameters);
  context.dropped.set(candidate, dropped);
  let sent = body;
  if (context.plugins.contextCompression && Array.isArray(body.messages)) {
    const reserve = Number(body.max_completion_tokens ?? body.max_tokens ?? candidate.endpoint.max_completion_tokens ?? 0);
    sent = { ...body, messages: compressMessages(body.messages as Array<Record<string, unknown>>, candidate.endpoint.context_length - reserve) };
  }
  context.sentBody.set(candidate, { ...sent, model: candidate.endpoint.upstream_model });
  return sent;
}

/**
 * Tries the candidates, holding each attempt's worst case first; when none accepts, the hold is released
 * (unless an abandoned attempt is still charged for) and the caller gets the most telling failure.
 */
export async function accepted<T>(
  context: ChatContext,
  call: (provider: ChatProvider, target: UpstreamTarget, body: Record<string, unknown>, attempt: AttemptSignal) => Promise<T>,
) {
  const { deps, caller } = context;
  const hold = { holds: deps.holds, generationId: context.generationId, keyHash: caller.keyHash, ttlMs: deps.holdTtlMs };
  try {
    return await firstAccepting(
      context.candidates,
      { env: deps.env, cooldowns: deps.cooldowns, logger: deps.logger, signal: context.signal, timeouts: deps.timeouts },
      context.attempts,
      async (provider, target, candidate, attempt) => {
        const body = bodyFor(context, candidate);
        context.held.set(candidate, await reserve(hold, candidate.endpoint, body, candidate.byokKey !== undefined));
        context.inFlight = candidate;
        return call(provider, target, body, attempt);
      },
    );
  } catch (error) {
    if (!abandoned(context)) {
      await deps.holds.release(context.generationId).catch((err: unknown) => deps.logger.warn({ err, generationId: context.generationId }, "could not release a spend hold; it will expire"));
    }
    throw error instanceof HttpError ? error : upstreamFailure(error, context.timedOut());
  }
}

/** The client went away while a provider was reading its request: that attempt is charged, not released. */
export const abandoned = (context: ChatContext): boolean => context.inFlight !== undefined && context.signal.aborted && !context.timedOut();
