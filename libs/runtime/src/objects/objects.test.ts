import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openObjectStore, type ObjectStore } from "./index.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** Disk always; the S3-compatible server too when S3_ENDPOINT names one (CI starts Swift's S3 layer). */
const stores: Array<[string, () => Promise<ObjectStore>]> = [
  [
    "disk",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "switchyard-objects-"));
      dirs.push(dir);
      return openObjectStore({ SWITCHYARD_DATA_DIR: dir, S3_BUCKET: "test", S3_REGION: "us-east-1", S3_FORCE_PATH_STYLE: true });
    },
  ],
];
const env = process.env;
if (env.S3_ENDPOINT) {
  stores.push([
    "s3",
    () =>
      openObjectStore({
        SWITCHYARD_DATA_DIR: tmpdir(),
        S3_ENDPOINT: env.S3_ENDPOINT,
        S3_BUCKET: `sy-objects-${randomBytes(5).toString("hex")}`,
        S3_REGION: env.S3_REGION ?? "us-east-1",
        S3_ACCESS_KEY_ID: env.S3_ACCESS_KEY_ID,
        S3_SECRET_ACCESS_KEY: env.S3_SECRET_ACCESS_KEY,
        S3_FORCE_PATH_STYLE: true,
      }),
  ]);
}

describe.each(stores)("the %s object store", (_kind, open) => {
  it("stores, streams back, and deletes objects under nested keys; a missing one is undefined", async () => {
    const store = await open();
    await store.ping();
    const body = randomBytes(70_000);
    await store.put("files/ws/or_file_1", body, "image/png");
    const got = await store.get("files/ws/or_file_1");
    expect(got).toMatchObject({ contentLength: body.length, contentType: "image/png" });
    const chunks: Buffer[] = [];
    for await (const chunk of got!.body) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(body)).toBe(true);
    await store.delete("files/ws/or_file_1");
    expect(await store.get("files/ws/or_file_1")).toBeUndefined();
    await store.delete("files/ws/never-there");
  });
});

it("refuses S3 without credentials, and disk keys that escape the folder", async () => {
  await expect(openObjectStore({ SWITCHYARD_DATA_DIR: tmpdir(), S3_ENDPOINT: "http://127.0.0.1:9", S3_BUCKET: "x1y", S3_REGION: "us-east-1", S3_FORCE_PATH_STYLE: true })).rejects.toThrow(/S3_ACCESS_KEY_ID/);
  const dir = await mkdtemp(join(tmpdir(), "switchyard-objects-"));
  dirs.push(dir);
  const disk = await openObjectStore({ SWITCHYARD_DATA_DIR: dir, S3_BUCKET: "test", S3_REGION: "us-east-1", S3_FORCE_PATH_STYLE: true });
  await expect(disk.put("../../etc/evil", Buffer.from("x"), "text/plain")).rejects.toThrow(/escapes/);
});
