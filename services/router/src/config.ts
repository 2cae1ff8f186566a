import { commonEnv, envFlag, optionalString, parseEnv, port } from "@switchyard/runtime";
import { z } from "zod";

/** One URL per replica, separated by commas; the router spreads requests over the ready ones. */
const replicas = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value) => value.split(",").map((url) => url.trim()).filter(Boolean))
    .pipe(z.array(z.url()).min(1));


export const routerEnv = z.object({
  ...commonEnv,
  /** Public port of the router. */
  PORT: port(8080),
  /** Base URLs of the identity service when it runs as its own process. */
  IDENTITY_URL: replicas("http://127.0.0.1:8081"),
  /** Base URLs of the catalog service when it runs as its own process. */
  CATALOG_URL: replicas("http://127.0.0.1:8082"),
  /** Base URLs of the inference service when it runs as its own process. */
  INFERENCE_URL: replicas("http://127.0.0.1:8083"),
  /** Base URLs of the media service (transcription, images) when it runs as its own process. */
  MEDIA_URL: replicas("http://127.0.0.1:8084"),
  /** Base URLs of the storage service (files, container files) when it runs as its own process. */
  STORAGE_URL: replicas("http://127.0.0.1:8085"),
  /** Requests per minute for keys without their own rate limit. */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
  /** How long an authenticated key is trusted before asking identity again (events drop it sooner). */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  /** How long an unknown key is remembered as unknown. */
  AUTH_NEGATIVE_CACHE_TTL_MS: z.coerce.number().int().min(0).default(5_000),
  /** `postgres` shares rate limits between router replicas (needs DATABASE_URL); `memory` is per process. */
  RATE_LIMIT_STORE: z.enum(["memory", "postgres"]).optional(),
  /** Serve the operator console at /console (static files; every call it makes needs a management key). */
  CONSOLE_ENABLED: envFlag(true),
  /** Unused by the router itself; accepted so one environment file can serve every process. */
  SWITCHYARD_BOOTSTRAP_KEY: optionalString,
});
export type RouterConfig = z.infer<typeof routerEnv>;

export const loadRouterConfig = (env?: Record<string, string | undefined>) => parseEnv(routerEnv, env);
