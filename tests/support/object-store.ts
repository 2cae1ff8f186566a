import { randomBytes } from "node:crypto";
import { testEnv } from "./config.js";

/**
 * The S3-compatible server named by S3_ENDPOINT (CI starts one) with a bucket of this test's own; without
 * it, nothing, and the gateway keeps objects on disk as in standalone mode.
 */
export function testObjectStoreEnv(): Record<string, string> {
  if (!testEnv.s3.S3_ENDPOINT) return {};
  return { ...testEnv.s3, S3_BUCKET: `sy-test-${randomBytes(6).toString("hex")}` };
}
