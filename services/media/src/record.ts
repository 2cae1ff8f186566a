import { noteRequest, observeGeneration, picoToDecimal, picoToUsd, serviceOf, type Db, type EventSink, type GenerationOperation, type Logger } from "@switchyard/runtime";
import { endAttemptSpan, findingsRecord, servedSample, servingModel, storedCount, type Attempt, type EndpointStats, type Charge, type Finding } from "@switchyard/upstream";
import type { MediaUsage } from "./cost.js";
import type { Attribution } from "./request-context.js";

export interface MediaGeneration {
  id: string;
  kind: "transcription" | "image" | "speech";
  keyHash: string;
  organizationId: string;
  workspaceId: string;
  guardrailIds: string[];
  /** What the guardrails' content filters redacted or flagged in the prompt. */
  findings: Finding[];
  /** Its workspace broadcasts its generations. */
  broadcast: boolean;
  /** Served with the workspace's own key: its charge is BYOK usage, which the gateway does not bill. */
  isByok: boolean;
  /** The request's end user (`user`), as the caller named it. */
  externalUser: string | null;
  /** The preset the request's model named. */
  presetId: string | null;
  /** Its session and the app that asked. */
  attribution: Attribution;
  requestId: string | null;
  model: string;
  provider: string | null;
  status: "completed" | "error" | "cancelled";
  streamed: boolean;
  usage: MediaUsage;
  usageEstimated: boolean;
  /** What the key is charged, and what the reported usage cost before the cap at the hold. */
  charge: Charge;
  latencyMs: number;
  /** A stream's time to its first audio or image; absent when buffered or nothing came. Counted, not stored. */
  firstOutputMs?: number | undefined;
  attempts: Attempt[];
  /** The request's `trace`, which the completed event carries to broadcast destinations. */
  trace?: Record<string, unknown> | undefined;
}

/** The event that completes each kind of generation. */
const subjects = {
  transcription: "media.transcription.completed.v1",
  image: "media.image.completed.v1",
  speech: "media.speech.completed.v1",
} as const;

/** Each kind as traces name its operation. */
const operations: Record<MediaGeneration["kind"], GenerationOperation> = { transcription: "transcription", image: "image_generation", speech: "speech" };

/**
 * Writes the generation and its `media.<kind>.completed.v1` event in one transaction: spend is never
 * recorded without the event that charges it. Retried a few times; a record that still cannot be
 * written is logged with everything needed to charge it by hand, and its hold expires.
 */
export async function recordGeneration(deps: { db: Db; events: EventSink; logger: Logger; stats: Pick<EndpointStats, "served"> }, g: MediaGeneration): Promise<void> {
  const cost = picoToDecimal(g.charge.charged);
  const upstreamCost = picoToDecimal(g.charge.reported);
  // Cut to what a row keeps: a provider's absurd count must not keep the generation and its charge out.
  const promptTokens = storedCount(g.usage.promptTokens + (g.usage.audioTokens ?? 0));
  const completionTokens = storedCount(g.usage.completionTokens + (g.usage.audioOutputTokens ?? 0));
  const startedAt = new Date(Date.now() - Math.max(0, g.latencyMs)).toISOString();
  noteRequest({ generationId: g.id, model: g.model, ...(g.provider ? { provider: g.provider } : {}), promptTokens, completionTokens, cost: picoToUsd(g.charge.charged) });
  endAttemptSpan(g.id, { promptTokens, completionTokens }, { status: g.status });
  // Every media generation is recorded here: its metrics are counted here too, once, before a retry.
  observeGeneration({
    service: serviceOf(deps.logger),
    operation: operations[g.kind],
    provider: g.provider ?? "none",
    model: g.model,
    status: g.status,
    seconds: Math.max(0, g.latencyMs) / 1000,
    firstOutputSeconds: g.firstOutputMs === undefined ? null : g.firstOutputMs / 1000,
    promptTokens,
    completionTokens,
    cachedTokens: 0,
    reasoningTokens: 0,
    costUsd: picoToUsd(g.charge.charged),
    byok: g.isByok,
  });
  if (g.status === "completed" && g.provider) {
    const firstOutputMs = g.firstOutputMs ?? null;
    deps.stats.served(g.provider, g.model, servedSample({ attempts: g.attempts, streamed: g.streamed, firstOutputMs, generationMs: Math.max(0, g.latencyMs), completionTokens }));
  }
  for (let attempt = 0; ; attempt++) {
    try {
      await deps.db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO media.generations (id, kind, key_hash, organization_id, workspace_id, request_id, model, provider, status, streamed,
             seconds, images, characters, prompt_tokens, completion_tokens, usage_estimated, cost_usd, upstream_cost_usd, latency_ms, attempts, content_filters, is_byok,
             external_user, preset_id, session_id, http_referer, app_title, user_agent)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)
           ON CONFLICT (id) DO NOTHING`,
          [g.id, g.kind, g.keyHash, g.organizationId, g.workspaceId, g.requestId, g.model, g.provider, g.status, g.streamed,
            g.usage.seconds ?? null, g.usage.images ?? null, g.usage.characters ?? null, promptTokens, completionTokens, g.usageEstimated, cost,
            upstreamCost, g.latencyMs, JSON.stringify(g.attempts), g.findings.length ? JSON.stringify(findingsRecord(g.findings)) : null, g.isByok, g.externalUser,
            g.presetId, g.attribution.sessionId, g.attribution.httpReferer, g.attribution.appTitle, g.attribution.userAgent],
        );
        const data = {
          generation_id: g.id,
          key_hash: g.keyHash,
          organization_id: g.organizationId,
          workspace_id: g.workspaceId,
          guardrail_ids: g.guardrailIds,
          model: g.model,
          provider: g.provider,
          status: g.status,
          streamed: g.streamed,
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          usage_estimated: g.usageEstimated,
          cost_usd: cost,
          is_byok: g.isByok,
          ...(g.usage.seconds !== undefined ? { seconds: g.usage.seconds } : {}),
          ...(g.usage.images !== undefined ? { images: g.usage.images } : {}),
          ...(g.usage.characters !== undefined ? { characters: g.usage.characters } : {}),
          ...(g.trace ? { trace: g.trace } : {}),
          generation_time_ms: Math.max(0, g.latencyMs),
          broadcast: g.broadcast,
          upstream_model: servingModel(g.attempts, g.provider),
          started_at: startedAt,
        };
        await deps.events.enqueue(tx, subjects[g.kind], data);
      });
      deps.events.committed();
      return;
    } catch (error) {
      if (attempt >= 4) {
        deps.logger.error({ err: error, generation: { ...g, charge: undefined, cost, upstreamCost } }, "media generation could not be recorded; charge it by hand");
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    }
  }
}
