import { commonEnv, envFlag, parseEnv, port, upstreamTimeoutsEnv } from "@switchyard/runtime";
import { z } from "zod";

export const inferenceEnv = z.object({
  ...commonEnv,
  ...upstreamTimeoutsEnv,
  /** Port of the inference service when it runs as its own process. */
  PORT: port(8083),
  /** Base URL of the catalog service when inference runs as its own process. */
  CATALOG_URL: z.url().default("http://127.0.0.1:8082"),
  /** Base URL of the identity service (spend holds) when inference runs as its own process. */
  IDENTITY_URL: z.url().default("http://127.0.0.1:8081"),
  /** Base URL of the storage service (input/output logging keeps generation content there). */
  STORAGE_URL: z.url().default("http://127.0.0.1:8085"),
  /** Base URL of the media service, which keeps the generations of transcription, images and speech. */
  MEDIA_URL: z.url().default("http://127.0.0.1:8084"),
  /** How long past the request deadline an unsettled spend hold waits for its completion event before it expires. */
  SPEND_HOLD_GRACE_MS: z.coerce.number().int().min(1000).default(300_000),
  /**
   * Charge what a provider reports even when it is more than the worst case held for the request (more tokens
   * than `max_tokens` allowed): off, such a generation is charged the held amount, so no limit is overrun.
   */
  SPEND_CHARGE_BEYOND_HOLD: envFlag(false),
  /** One deadline for every attempt of a request, first byte to last. */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).default(600_000),
  /** How long a finished generation waits for others to share its database transaction. */
  GENERATION_FLUSH_MS: z.coerce.number().int().min(0).max(1000).default(50),
  /** Base URL of the sandbox service, which runs the shell tools' commands; unset means those tools are refused. */
  SANDBOX_URL: z.url().optional(),
  /** Most agent steps (turns whose server tool calls run) of one request, whatever the request asks. */
  SERVER_TOOL_MAX_STEPS: z.coerce.number().int().min(1).max(100).default(30),
  /** What WEB_SEARCH_URL is: a SearXNG instance, or any service speaking Switchyard's small JSON search API. */
  WEB_SEARCH_KIND: z.enum(["searxng", "json"]).default("searxng"),
  /** The web search tool's backend; unset means web search is refused. */
  WEB_SEARCH_URL: z.url().optional(),
  /** Sent as a bearer token to the search backend. */
  WEB_SEARCH_API_KEY: z.string().optional(),
  /** Longest wait for one search. */
  WEB_SEARCH_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Lets the `openrouter:web_fetch` tool fetch pages from public addresses; off, requests declaring it are refused. */
  WEB_FETCH_ENABLED: envFlag(true),
  /** Longest wait for one fetch, redirects and body included. */
  WEB_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Most bytes of a page read; a longer page is cut there. */
  WEB_FETCH_MAX_BYTES: z.coerce.number().int().min(1024).default(2 * 1024 * 1024),
  /** Longest time a request may ask the response cache to keep its answer (`X-OpenRouter-Cache-TTL`), in seconds. */
  RESPONSE_CACHE_MAX_TTL_SECONDS: z.coerce.number().int().min(1).max(2_592_000).default(86_400),
  /** Largest answer the response cache keeps, in bytes of its JSON; a larger answer is served but not kept. */
  RESPONSE_CACHE_MAX_ENTRY_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  /** How often expired answers are removed from the response cache (they are never served once expired). */
  RESPONSE_CACHE_PURGE_INTERVAL_MS: z.coerce.number().int().min(1000).default(60_000),
  /** A URL that gets each generation's trace metadata as a signed JSON POST. */
  BROADCAST_WEBHOOK_URL: z.url().optional(),
  /** The webhook's signing secret (32+ characters); required with BROADCAST_WEBHOOK_URL. */
  BROADCAST_WEBHOOK_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
});
export type InferenceConfig = z.infer<typeof inferenceEnv> & { providerEnv: Record<string, string | undefined> };

export function loadInferenceConfig(env: Record<string, string | undefined> = process.env): InferenceConfig {
  return { ...parseEnv(inferenceEnv, env), providerEnv: env };
}
