import type { Readable } from "node:stream";

export interface StoredObject {
  body: Readable;
  contentLength: number;
  contentType: string;
}

/** File bodies: an S3-compatible bucket, or a folder on local disk in standalone mode. */
export interface ObjectStore {
  readonly kind: "s3" | "disk";
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  /** Undefined when there is no such object. */
  get(key: string): Promise<StoredObject | undefined>;
  /** Deleting what is not there is not an error. */
  delete(key: string): Promise<void>;
  /** Readiness: the bucket or folder answers. */
  ping(): Promise<void>;
}
