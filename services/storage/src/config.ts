import { commonEnv, objectStoreEnv, parseEnv, port } from "@switchyard/runtime";
import { z } from "zod";

export const storageEnv = z.object({
  ...commonEnv,
  ...objectStoreEnv,
  /** Port of the storage service when it runs as its own process. */
  PORT: port(8085),
  /** Base URL of the identity service (workspaces' own provider keys) when storage runs as its own process. */
  IDENTITY_URL: z.url().default("http://127.0.0.1:8081"),
  /** Largest workspace file, in bytes; larger uploads are refused with 413 as soon as they pass it. */
  MAX_FILE_BYTES: z.coerce.number().int().min(1024).default(32 * 1024 * 1024),
  /** An upload unfinished after this long is an orphan: its object and row are removed. */
  ORPHAN_UPLOAD_MS: z.coerce.number().int().min(1000).default(3_600_000),
  /** How long what input/output logging keeps of a generation is kept (30 days). */
  GENERATION_CONTENT_RETENTION_MS: z.coerce.number().int().min(1000).default(30 * 86_400_000),
});
export type StorageConfig = z.infer<typeof storageEnv> & { providerEnv: Record<string, string | undefined> };

export function loadStorageConfig(env: Record<string, string | undefined> = process.env): StorageConfig {
  return { ...parseEnv(storageEnv, env), providerEnv: env };
}
