import type { ContentFilterFinding, Generation, GenerationScope } from "@switchyard/contracts";
import type { Queryable } from "@switchyard/runtime";
import { appId, generationCost, originOf, providerResponses, type Attempt } from "@switchyard/upstream";

interface Row {
  id: string;
  kind: "transcription" | "image" | "speech";
  request_id: string | null;
  workspace_id: string;
  model: string;
  provider: string | null;
  status: "completed" | "error" | "cancelled";
  streamed: boolean;
  images: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: string;
  upstream_cost_usd: string | null;
  latency_ms: number;
  attempts: Attempt[];
  content_filters: ContentFilterFinding[] | null;
  is_byok: boolean;
  external_user: string | null;
  preset_id: string | null;
  session_id: string | null;
  http_referer: string | null;
  app_title: string | null;
  user_agent: string | null;
  created_at: Date;
}

/** OpenRouter's name for each kind of media generation. */
const apiTypes = { transcription: "stt", image: "image", speech: "tts" } as const;

/**
 * One media generation as `GET /generation` answers for every generation, or undefined when there is none in
 * the caller's scope. Media answers in one piece, so the time to its first byte is its whole time.
 */
export async function findGeneration(db: Queryable, scope: GenerationScope, id: string): Promise<Generation | undefined> {
  const [r] = await db.query<Row>(
    `SELECT id, kind, request_id, workspace_id::text, model, provider, status, streamed, images, prompt_tokens, completion_tokens,
       cost_usd::text, upstream_cost_usd::text, latency_ms, attempts, content_filters, is_byok, external_user, preset_id, session_id,
       http_referer, app_title, user_agent, created_at
     FROM media.generations WHERE id = $1 AND organization_id = $2 AND ($3::uuid IS NULL OR workspace_id = $3::uuid)`,
    [id, scope.organizationId, scope.workspaceId ?? null],
  );
  if (!r) return undefined;
  return {
    id: r.id,
    upstream_id: null,
    request_id: r.request_id,
    session_id: r.session_id,
    created_at: r.created_at.toISOString(),
    model: r.model,
    api_type: apiTypes[r.kind],
    app_id: appId(r.http_referer),
    workspace_id: r.workspace_id,
    preset_id: r.preset_id,
    origin: originOf(r.http_referer),
    http_referer: r.http_referer,
    user_agent: r.user_agent,
    external_user: r.external_user,
    data_region: "global",
    router: null,
    provider_name: r.provider,
    provider_responses: providerResponses(r.attempts),
    service_tier: null,
    streamed: r.streamed,
    cancelled: r.status === "cancelled",
    finish_reason: r.status === "error" ? "error" : null,
    native_finish_reason: null,
    is_byok: r.is_byok,
    latency: r.latency_ms,
    generation_time: r.latency_ms,
    moderation_latency: null,
    tokens_prompt: r.prompt_tokens,
    tokens_completion: r.completion_tokens,
    native_tokens_prompt: r.prompt_tokens,
    native_tokens_completion: r.completion_tokens,
    native_tokens_completion_images: null,
    native_tokens_reasoning: null,
    native_tokens_cached: null,
    num_media_prompt: null,
    num_media_completion: r.images,
    num_input_audio_prompt: r.kind === "transcription" ? 1 : null,
    ...generationCost(r.cost_usd, r.upstream_cost_usd, r.is_byok),
    ...(r.content_filters?.length ? { content_filters: r.content_filters } : {}),
    ...(r.app_title ? { app_title: r.app_title } : {}),
  };
}
