import { commonEnv, optionalString, parseEnv, port } from "@switchyard/runtime";
import { z } from "zod";

export const identityEnv = z.object({
  ...commonEnv,
  /** Port of the identity service when it runs as its own process. */
  PORT: port(8081),
  /**
   * A management key with exactly this secret exists after start (idempotent). Any secret of 32 or more
   * characters, used as is. Unset: an empty database gets one generated key, printed once.
   */
  SWITCHYARD_BOOTSTRAP_KEY: optionalString.pipe(z.string().min(32, "must be at least 32 characters").optional()),
  /**
   * Seals workspaces' own provider keys (BYOK) at rest; 32+ characters, the same for every identity replica.
   * Unset with an embedded database: one is made on first start and kept in SWITCHYARD_DATA_DIR.
   */
  SWITCHYARD_ENCRYPTION_KEY: optionalString.pipe(z.string().min(32, "must be at least 32 characters").optional()),
  /** Catalog's internal address, asked whether a provider a workspace brings its own key for exists. */
  CATALOG_URL: z.url().default("http://127.0.0.1:8082"),
  /** Requests per minute for keys without their own rate limit. */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
  /**
   * Development and tests only: lets federation policies trust plain-http issuers on loopback and private
   * addresses. Never set in production: it opens the token exchange to server-side request forgery.
   */
  FEDERATION_ALLOW_INSECURE_ISSUERS: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true"),
  /** How often an issuer's key set may be fetched again for a token naming a key not seen yet (rotation). */
  FEDERATION_KEYS_REFRESH_MS: z.coerce.number().int().min(100).default(60_000),
  /** Token exchanges per federation policy per minute, in each identity process; more get 429. */
  FEDERATION_EXCHANGES_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  /** How often identity frees the spend holds whose lease lapsed. */
  SPEND_HOLD_REAP_MS: z.coerce.number().int().min(100).default(5_000),
});
export type IdentityConfig = z.infer<typeof identityEnv>;

export const loadIdentityConfig = (env?: Record<string, string | undefined>) => parseEnv(identityEnv, env);
