import { randomBytes } from "node:crypto";

/**
 * The S3-compatible server named by S3_ENDPOINT (CI starts one) with a bucket of this test's own; without
 * it, nothing, and the gateway keeps objects on disk as in standalone mode.
 */
export function testObjectStoreEnv(): Record<string, string> {
  const env = process.env;
  if (!env.S3_ENDPOINT) return {};
  const passed = ["S3_ENDPOINT", "S3_REGION", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "S3_FORCE_PATH_STYLE"].filter((name) => env[name] !== undefined);
  return { ...Object.fromEntries(passed.map((name) => [name, env[name]!])), S3_BUCKET: `sy-test-${randomBytes(6).toString("hex")}` };
}
