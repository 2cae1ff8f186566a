import type { Readable } from "node:stream";
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import type { ObjectStore } from "./types.js";

export interface S3Options {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

const missing = (error: unknown) =>
  error instanceof NoSuchKey || (error instanceof S3ServiceException && (error.$metadata.httpStatusCode === 404 || error.name === "NotFound"));

/** An S3-compatible bucket (AWS, MinIO, Swift's s3api, Ceph...), made on first use when it is missing. */
export async function s3ObjectStore(options: S3Options): Promise<ObjectStore> {
  const client = new S3Client({
    endpoint: options.endpoint,
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
    // Some S3-compatible servers reject the checksums newer SDKs add unless asked for.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const Bucket = options.bucket;
  try {
    await client.send(new HeadBucketCommand({ Bucket }));
  } catch (error) {
    if (!missing(error)) throw error;
    await client.send(new CreateBucketCommand({ Bucket }));
  }
  return {
    kind: "s3",
    async put(key, body, contentType) {
      await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.length }));
    },
    async get(key) {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        return { body: answer.Body as Readable, contentLength: answer.ContentLength ?? 0, contentType: answer.ContentType ?? "application/octet-stream" };
      } catch (error) {
        if (missing(error)) return undefined;
        throw error;
      }
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
    async ping() {
      await client.send(new HeadBucketCommand({ Bucket }));
    },
  };
}
