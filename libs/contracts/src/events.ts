import { z } from "zod";

/**
 * The event registry: every subject `<domain>.<entity>.<event>.v<major>` with its payload schema.
 * A published version only gains optional fields; a breaking change is a new `.v2` subject.
 */
const apiKeyChanged = z.object({
  hash: z.string(),
  organization_id: z.uuid(),
  workspace_id: z.uuid(),
});
const workspaceChanged = z.object({
  id: z.uuid(),
  organization_id: z.uuid(),
  default_guardrail_id: z.uuid(),
});

const guardrailChanged = z.object({ id: z.uuid(), organization_id: z.uuid() });
const catalogReloaded = z.object({ models: z.number().int(), providers: z.number().int() });

/** One finished generation: what it cost and whom to charge. `cost_usd` is an exact decimal string. */
const generationCompleted = z.object({
  generation_id: z.string(),
  key_hash: z.string(),
  organization_id: z.uuid(),
  workspace_id: z.uuid(),
  guardrail_ids: z.array(z.string()),
  model: z.string(),
  provider: z.string().nullable(),
  status: z.enum(["completed", "error", "cancelled"]),
  streamed: z.boolean(),
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  usage_estimated: z.boolean(),
  cost_usd: z.string().regex(/^\d+(\.\d+)?$/),
  is_byok: z.boolean(),
  /** The request's tracing metadata (`trace_id`, `span_name`… and pass-through keys), for broadcast destinations. */
  trace: z.record(z.string(), z.unknown()).optional(),
  finish_reason: z.string().nullable().optional(),
  /** From the request's arrival to its last byte. */
  generation_time_ms: z.number().int().min(0).optional(),
  /** Its workspace turned broadcast on (`is_observability_broadcast_enabled`): destinations receive it. */
  broadcast: z.boolean().optional(),
  /** What inference's generation did: absent for a chat completion (any dialect), else `embeddings` or `rerank`. */
  operation: z.enum(["embeddings", "rerank"]).optional(),
  /** The upstream model of the endpoint that served (null when none did), for activity per endpoint. */
  upstream_model: z.string().nullable().optional(),
  reasoning_tokens: z.number().int().min(0).optional(),
  /** When the request arrived (the event's own time is when it was recorded, after the last byte). */
  started_at: z.iso.datetime({ offset: true }).optional(),
});

/** A finished transcription, image generation or speech: charged like a chat generation, with what was produced. */
const mediaCompleted = generationCompleted.extend({
  seconds: z.number().min(0).optional(),
  images: z.number().int().min(0).optional(),
  /** Speech: characters of the text spoken. */
  characters: z.number().int().min(0).optional(),
});

/** A sandbox reported files of a container; storage holds their metadata (and bodies sent along). */
const containerFilesSynced = z.object({
  container_id: z.string(),
  organization_id: z.uuid(),
  workspace_id: z.uuid(),
  files: z.number().int().min(1),
});

/** One replica saw an endpoint fail (it rests `rest_ms`) or answer again (null); the others order it alike. */
const endpointHealth = z.object({
  provider: z.string(),
  upstream_model: z.string(),
  rest_ms: z.number().int().min(0).nullable(),
  /** The replica that saw it, which ignores its own event. */
  origin: z.string(),
});

export const eventRegistry = {
  "identity.api_key.created.v1": apiKeyChanged,
  "identity.api_key.updated.v1": apiKeyChanged,
  "identity.api_key.deleted.v1": apiKeyChanged,
  "identity.workspace.created.v1": workspaceChanged,
  "identity.workspace.updated.v1": workspaceChanged,
  "identity.workspace.deleted.v1": workspaceChanged,
  "catalog.guardrail.created.v1": guardrailChanged,
  "catalog.guardrail.updated.v1": guardrailChanged,
  "catalog.guardrail.deleted.v1": guardrailChanged,
  "catalog.models.reloaded.v1": catalogReloaded,
  /** Another catalog replica re-read its file after a `reloaded`: answers remembered from it are made again. */
  "catalog.models.refreshed.v1": catalogReloaded,
  "inference.generation.completed.v1": generationCompleted,
  "inference.endpoint.health.v1": endpointHealth,
  "media.endpoint.health.v1": endpointHealth,
  "media.transcription.completed.v1": mediaCompleted,
  "media.image.completed.v1": mediaCompleted,
  "media.speech.completed.v1": mediaCompleted,
  "storage.container_files.synced.v1": containerFilesSynced,
} as const;

export type EventSubject = keyof typeof eventRegistry;
export type EventData<S extends EventSubject> = z.infer<(typeof eventRegistry)[S]>;

/** What travels on the bus: the payload plus the id that makes delivery idempotent. */
export interface EventEnvelope<S extends EventSubject = EventSubject> {
  id: string;
  subject: S;
  occurred_at: string;
  data: EventData<S>;
}

/** The domain of a subject is its first segment; each domain has one stream. */
export const eventDomain = (subject: string): string => subject.split(".", 1)[0] ?? subject;

export const eventEnvelope = z.object({
  id: z.uuid(),
  subject: z.string(),
  occurred_at: z.string(),
  data: z.unknown(),
});

/** Validates a received envelope against the registry; throws a ZodError on drift. */
export function parseEvent(raw: unknown): EventEnvelope {
  const envelope = eventEnvelope.parse(raw);
  const schema = (eventRegistry as Record<string, z.ZodType>)[envelope.subject];
  if (!schema) throw new Error(`unknown event subject: ${envelope.subject}`);
  return { ...envelope, data: schema.parse(envelope.data) } as EventEnvelope;
}
