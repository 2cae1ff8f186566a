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
  /** Requests per minute for keys without their own rate limit. */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
});
export type IdentityConfig = z.infer<typeof identityEnv>;

export const loadIdentityConfig = (env?: Record<string, string | undefined>) => parseEnv(identityEnv, env);
