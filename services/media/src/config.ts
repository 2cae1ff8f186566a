import { commonEnv, envFlag, parseEnv, port, upstreamTimeoutsEnv } from "@switchyard/runtime";
import { z } from "zod";

export const mediaEnv = z.object({
  ...commonEnv,
  ...upstreamTimeoutsEnv,
  /** Port of the media service when it runs as its own process. */
  PORT: port(8084),
  /** Base URL of the catalog service when media runs as its own process. */
  CATALOG_URL: z.url().default("http://127.0.0.1:8082"),
  /** Base URL of the identity service (spend holds) when media runs as its own process. */
  IDENTITY_URL: z.url().default("http://127.0.0.1:8081"),
  /** One deadline for every attempt of a transcription, image or speech request, a speech's whole stream included. */
  MEDIA_TIMEOUT_MS: z.coerce.number().int().min(1000).default(300_000),
  /** How long past the deadline an unsettled spend hold waits for its completion event before it expires. */
  SPEND_HOLD_GRACE_MS: z.coerce.number().int().min(1000).default(300_000),
  /** Charge what a provider reports even past the worst case held for the request; off, the held amount is charged. */
  SPEND_CHARGE_BEYOND_HOLD: envFlag(false),
  /** Largest audio file a transcription takes, in bytes (OpenAI's limit is 25 MB). */
  MAX_AUDIO_BYTES: z.coerce.number().int().min(1024).default(25 * 1024 * 1024),
  /** Largest reference image, fetched or inline, in bytes. */
  MAX_REFERENCE_BYTES: z.coerce.number().int().min(1024).default(10 * 1024 * 1024),
  /** How long fetching all reference images of one request may take. */
  REFERENCE_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Lets reference URLs reach loopback and private addresses: for development against local servers only. */
  REFERENCE_FETCH_ALLOW_PRIVATE: envFlag(false),
});
export type MediaConfig = z.infer<typeof mediaEnv> & { providerEnv: Record<string, string | undefined> };

export function loadMediaConfig(env: Record<string, string | undefined> = process.env): MediaConfig {
  return { ...parseEnv(mediaEnv, env), providerEnv: env };
}
