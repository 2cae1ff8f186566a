import { join } from "node:path";
import { z } from "zod";
import { optionalString } from "../config.js";
import { diskObjectStore } from "./disk.js";
import type { ObjectStore } from "./types.js";

export type { ObjectStore, StoredObject } from "./types.js";
export { diskObjectStore } from "./disk.js";

/** Variables of the object store; without S3_ENDPOINT, objects live on disk under SWITCHYARD_DATA_DIR. */
export const objectStoreEnv = {
  /** S3-compatible endpoint, e.g. http://127.0.0.1:8090; unset means local disk. */
  S3_ENDPOINT: optionalString,
  /** Bucket of file bodies; made on start when missing. */
  S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "must be a valid bucket name").default("switchyard"),
  S3_REGION: z.string().default("us-east-1"),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  /** Path-style addressing (`endpoint/bucket/key`), which most self-hosted servers need. */
  S3_FORCE_PATH_STYLE: z.enum(["true", "false"]).default("true").transform((v) => v === "true"),
};

export interface ObjectStoreConfig {
  S3_ENDPOINT?: string | undefined;
  S3_BUCKET: string;
  S3_REGION: string;
  S3_ACCESS_KEY_ID?: string | undefined;
  S3_SECRET_ACCESS_KEY?: string | undefined;
  S3_FORCE_PATH_STYLE: boolean;
  SWITCHYARD_DATA_DIR: string;
}

export async function openObjectStore(config: ObjectStoreConfig): Promise<ObjectStore> {
  if (!config.S3_ENDPOINT) return diskObjectStore(join(config.SWITCHYARD_DATA_DIR, "objects", config.S3_BUCKET));
  if (!config.S3_ACCESS_KEY_ID || !config.S3_SECRET_ACCESS_KEY) throw new Error("S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required with S3_ENDPOINT");
  // Loaded only here: the S3 client holds memory (7 MB of a standalone gateway's) that a gateway storing on disk never uses.
  const { s3ObjectStore } = await import("./s3.js");
  return s3ObjectStore({
    endpoint: config.S3_ENDPOINT,
    bucket: config.S3_BUCKET,
    region: config.S3_REGION,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
  });
}
