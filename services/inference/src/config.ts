import { commonEnv, parseEnv, port } from "@switchyard/runtime";
import { z } from "zod";

export const inferenceEnv = z.object({
  ...commonEnv,
  /** Port of the inference service when it runs as its own process. */
  PORT: port(8083),
  /** Base URL of the catalog service when inference runs as its own process. */
  CATALOG_URL: z.url().default("http://127.0.0.1:8082"),
  /** Base URL of the identity service (spend holds) when inference runs as its own process. */
  IDENTITY_URL: z.url().default("http://127.0.0.1:8081"),
  /** How long past the request deadline an unsettled spend hold waits for its completion event before it expires. */
  SPEND_HOLD_GRACE_MS: z.coerce.number().int().min(1000).default(300_000),
  /** One deadline for every attempt of a request, first byte to last. */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).default(600_000),
  /** How long a finished generation waits for others to share its database transaction. */
  GENERATION_FLUSH_MS: z.coerce.number().int().min(0).max(1000).default(50),
});
export type InferenceConfig = z.infer<typeof inferenceEnv> & { providerEnv: Record<string, string | undefined> };

export function loadInferenceConfig(env: Record<string, string | undefined> = process.env): InferenceConfig {
  return { ...parseEnv(inferenceEnv, env), providerEnv: env };
}
