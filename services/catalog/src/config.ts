import { commonEnv, optionalString, parseEnv, port } from "@switchyard/runtime";
import { z } from "zod";

const firstUrl = z
  .string()
  .transform((list) => list.split(",")[0]!.trim())
  .pipe(z.url())
  .optional();

export const catalogEnv = z.object({
  ...commonEnv,
  /** Port of the catalog service when it runs as its own process. */
  PORT: port(8082),
  /** The operator's catalog file (YAML or JSON); unset means the shipped default catalog. */
  SWITCHYARD_CONFIG: optionalString,
  /** Base URL of the identity service when catalog runs as its own process. */
  IDENTITY_URL: z.url().default("http://127.0.0.1:8081"),
  /**
   * Base URLs of inference and media, whose live endpoint statistics the endpoint listings show; a service
   * left unset has its endpoints listed without figures. A comma-separated list of replicas, as the router
   * takes, works too: each replica has every replica's figures, so the first is asked.
   */
  INFERENCE_URL: firstUrl,
  MEDIA_URL: firstUrl,
});
export type CatalogConfig = z.infer<typeof catalogEnv> & {
  /** Provider keys and base URLs (`<SLUG>_API_KEY`, `<SLUG>_BASE_URL`, each provider's `api_key_env`). */
  providerEnv: Record<string, string | undefined>;
};

export function loadCatalogConfig(env: Record<string, string | undefined> = process.env): CatalogConfig {
  return { ...parseEnv(catalogEnv, env), providerEnv: env };
}
