import { get, type IncomingMessage } from "node:http";
import { OpenRouter } from "@openrouter/sdk";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { largeFileBytes, startFakeFilesProvider, type FakeFilesProvider } from "./support/fake-files.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let fake: FakeFilesProvider;
let key: string;
let sdk: OpenRouter;
let workspaceId: string;

const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

beforeAll(async () => {
  fake = await startFakeFilesProvider();
  gw = await startTestGateway({
    MAX_FILE_BYTES: "200000",
    OPENAI_BASE_URL: fake.baseUrl,
    ANTHROPIC_BASE_URL: fake.baseUrl,
    SWITCHYARD_ENCRYPTION_KEY: "storage-test-encryption-secret-0123456789",
  });
  const created = await gw.call("POST", "/keys", { body: { name: "files" } });
  key = String(created.body.key);
  workspaceId = String((created.body.data as Record<string, unknown>).workspace_id);
  sdk = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl, retryConfig: { strategy: "none" } });
});
afterAll(async () => {
  await gw.stop();
  await fake.stop();
});

/** The SDK's file union includes an unknown shape; the tests check the shape and read the fields they need. */
type Uploaded = Record<string, unknown> & { id: string };
const upload = async (content: Uint8Array, fileName: string, client = sdk) => (await client.files.upload({ requestBody: { file: { fileName, content } } })) as unknown as Uploaded;
const readAll = async (stream: ReadableStream<Uint8Array>) => Buffer.from(await new Response(stream).arrayBuffer());

/** A fresh workspace with its own inference key, so listings start empty. */
async function freshWorkspace(): Promise<{ key: string; client: OpenRouter; id: string }> {
  const ws = await gw.call("POST", "/workspaces", { body: { name: `w${Date.now()}${Math.random()}`, slug: `w-${Math.random().toString(36).slice(2, 10)}` } });
  const id = String((ws.body.data as unknown as Record<string, unknown>).id);
  const created = await gw.call("POST", "/keys", { body: { name: "w", workspace_id: id } });
  const k = String(created.body.key);
  return { key: k, id, client: new OpenRouter({ apiKey: k, serverURL: gw.apiUrl, retryConfig: { strategy: "none" } }) };
}

describe("workspace files on the gateway's own storage", () => {
  it("uploads, retrieves, downloads and deletes through @openrouter/sdk, with the type read from the bytes", async () => {
    const file = await upload(png, "picture.bin");
    expect(file).toMatchObject({ shape: "openrouter", filename: "picture.bin", mimeType: "image/png", sizeBytes: png.length, downloadable: true, type: "file" });
    expect(file.id).toMatch(/^or_file_[A-Za-z0-9_-]{20,}$/);
    expect(await sdk.files.retrieve({ fileId: file.id })).toMatchObject({ id: file.id, shape: "openrouter" });
    expect((await readAll(await sdk.files.download({ fileId: file.id }))).equals(png)).toBe(true);
    expect(await sdk.files.delete({ fileId: file.id })).toMatchObject({ shape: "openrouter", id: file.id, type: "file_deleted" });
    await expect(sdk.files.retrieve({ fileId: file.id })).rejects.toMatchObject({ statusCode: 404 });
  });

  it("names a download in its Content-Disposition as RFC 6266 and RFC 5987 write it", async () => {
    const file = await upload(Buffer.from("hi"), "it's (a) *résumé*.txt");
    const res = await fetch(`${gw.apiUrl}/files/${file.id}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="it's (a) *r_sum_*.txt"; filename*=UTF-8''it%27s%20%28a%29%20%2Ar%C3%A9sum%C3%A9%2A.txt`);
  });

  it("reads text types from the name only when the bytes are text", async () => {
    expect((await upload(Buffer.from("a,b\n1,2\n"), "table.csv")).mimeType).toBe("text/csv");
    expect((await upload(Buffer.from("%PDF-1.7\n..."), "report.txt")).mimeType).toBe("application/pdf");
    expect((await upload(Buffer.from([0, 1, 2, 3, 250, 251]), "blob.csv")).mimeType).toBe("application/octet-stream");
  });

  it("keeps workspaces apart: another workspace's file is not found, its listing is refused to an inference key", async () => {
    const other = await freshWorkspace();
    const theirs = await upload(png, "theirs.png", other.client);
    await expect(sdk.files.retrieve({ fileId: theirs.id })).rejects.toMatchObject({ statusCode: 404 });
    await expect(sdk.files.delete({ fileId: theirs.id })).rejects.toMatchObject({ statusCode: 404 });
    expect((await gw.call("GET", `/files/${theirs.id}/content`, { key })).status).toBe(404);
    expect((await gw.call("GET", `/files?workspace_id=${other.id}`, { key })).status).toBe(403);
    // A management key of the organization may list each of its workspaces.
    const listed = await gw.call("GET", `/files?workspace_id=${other.id}`, { key: bootstrapKey });
    expect((listed.body.data as unknown as Array<{ id: string }>).map((f) => f.id)).toEqual([theirs.id]);
  });

  it("walks every page with each cursor style and sees every file once, in upload order; has_more never lies", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 1, max: 4 }), fc.constantFrom("cursor", "after", "after_id"), async (count, limit, style) => {
        const ws = await freshWorkspace();
        const ids: string[] = [];
        for (let i = 0; i < count; i++) ids.push((await upload(Buffer.from(`file ${i}`), `f${i}.txt`, ws.client)).id);
        const seen: string[] = [];
        let next: Record<string, string> = {};
        for (let pages = 0; pages <= count + 1; pages++) {
          const page = await ws.client.files.list({ limit, ...next });
          const body = page.result as unknown as { data: Array<{ id: string }>; cursor: string | null; lastId: string | null; hasMore: boolean };
          seen.push(...body.data.map((f) => f.id));
          expect(body.hasMore).toBe(seen.length < count);
          if (!body.hasMore) break;
          next = style === "cursor" ? { cursor: body.cursor! } : style === "after" ? { after: body.lastId! } : { afterId: body.lastId! };
        }
        expect(seen).toEqual(ids);
      }),
      { numRuns: 6 },
    );
  });

  it.each([
    ["limit=0", /limit/],
    ["limit=1001", /limit/],
    ["before_id=or_file_x", /before_id: is not supported by the service's own storage/],
    ["order=desc", /order: only asc/],
    ["cursor=bm9wZQ", /cursor: not a cursor/],
    // files:9999999999999999999 and files:9223372036854775808: past the largest bigint, the column's type.
    ["cursor=ZmlsZXM6OTk5OTk5OTk5OTk5OTk5OTk5OQ", /cursor: not a cursor/],
    [`cursor=${Buffer.from("files:9223372036854775808").toString("base64url")}`, /cursor: not a cursor/],
    ["after=or_file_nope", /no file or_file_nope/],
    ["after=x&after_id=y", /use one of cursor, after and after_id/],
    ["provider=dropbox", /provider/],
  ])("refuses GET /files?%s with 400", async (query, message) => {
    const res = await gw.call("GET", `/files?${query}`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(message);
  });

  it("takes a cursor at the largest position there can be, as the end of the listing", async () => {
    const res = await gw.call("GET", `/files?cursor=${Buffer.from("files:9223372036854775807").toString("base64url")}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ data: [], cursor: null, has_more: false });
  });

  it("refuses an empty file, an unknown purpose or field, and an expiry it would not keep", async () => {
    const send = async (fields: Record<string, string>, content = "a,b\n1,2\n") => {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.set(name, value);
      form.set("file", new Blob([content]), "t.csv");
      const res = await fetch(`${gw.apiUrl}/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
      return { status: res.status, message: ((await res.json()) as { error?: { message?: string } }).error?.message };
    };
    expect(await send({}, "")).toEqual({ status: 400, message: "Invalid body: file: the file is empty" });
    expect((await send({ purpose: "definitely-not-a-purpose" })).message).toMatch(/^Invalid body: purpose: must be one of assistants/);
    expect((await send({ colour: "red" })).message).toMatch(/^Invalid body: unknown field colour/);
    expect((await send({ "expires_after[anchor]": "created_at", "expires_after[seconds]": "3600" })).message).toMatch(/workspace files do not expire/);
    // The openai SDK always sends a purpose.
    expect((await send({ purpose: "user_data" })).status).toBe(200);
  });

  it("refuses an upload over the size limit with 413, and one without a file part with 400", async () => {
    const big = new FormData();
    big.set("file", new Blob([Buffer.alloc(300_000, 65)]), "big.txt");
    expect((await fetch(`${gw.apiUrl}/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: big })).status).toBe(413);
    const empty = new FormData();
    empty.set("purpose", "user_data");
    expect((await fetch(`${gw.apiUrl}/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: empty })).status).toBe(400);
  });
});

describe("workspace files at a provider, with the workspace's own key", () => {
  it("refuses provider= until the workspace has a key for it, then uses exactly that key", async () => {
    const refused = await gw.call("GET", "/files?provider=openai", { key });
    expect(refused.status).toBe(400);
    expect(refused.body.error?.message).toMatch(/no openai key/);
    const put = await gw.call("PUT", `/workspaces/${workspaceId}/provider-keys/openai`, { key: bootstrapKey, body: { key: "sk-workspace-own-openai" } });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ provider: "openai", label: "…enai" });
    await gw.call("PUT", `/workspaces/${workspaceId}/provider-keys/anthropic`, { key: bootstrapKey, body: { key: "sk-ant-workspace-own" } });
    const listed = await gw.call("GET", `/workspaces/${workspaceId}/provider-keys`, { key: bootstrapKey });
    expect(JSON.stringify(listed.body)).not.toContain("sk-workspace-own-openai");

    const openaiFile = (await sdk.files.upload({ provider: "openai", requestBody: { file: { fileName: "notes.txt", content: Buffer.from("hello") } } })) as unknown as Uploaded;
    expect(openaiFile).toMatchObject({ shape: "openai", filename: "notes.txt", bytes: 5 });
    expect(fake.credentials.at(-1)).toBe("Bearer sk-workspace-own-openai");
    const openaiList = (await sdk.files.list({ provider: "openai" })).result as unknown as { shape: string; data: Array<{ id: string }> };
    expect(openaiList.shape).toBe("openai");
    expect(openaiList.data.map((f) => f.id)).toEqual([openaiFile.id]);
    expect((await readAll(await sdk.files.download({ fileId: openaiFile.id, provider: "openai" }))).toString()).toBe("hello");

    const anthropicFile = (await sdk.files.upload({ provider: "anthropic", requestBody: { file: { fileName: "a.txt", content: Buffer.from("bonjour") } } })) as unknown as Uploaded;
    expect(anthropicFile).toMatchObject({ shape: "anthropic", filename: "a.txt", sizeBytes: 7 });
    expect(fake.credentials.at(-1)).toBe("sk-ant-workspace-own");
    const anthropicList = (await sdk.files.list({ provider: "anthropic", limit: 10 })).result as unknown as { shape: string };
    expect(anthropicList.shape).toBe("anthropic");
    expect(await sdk.files.retrieve({ fileId: anthropicFile.id, provider: "anthropic" })).toMatchObject({ shape: "anthropic", id: anthropicFile.id });
    expect(await sdk.files.delete({ fileId: anthropicFile.id, provider: "anthropic" })).toMatchObject({ shape: "anthropic", type: "file_deleted" });
    await expect(sdk.files.retrieve({ fileId: anthropicFile.id, provider: "anthropic" })).rejects.toMatchObject({ statusCode: 404 });
    expect(await sdk.files.delete({ fileId: openaiFile.id, provider: "openai" })).toMatchObject({ shape: "openai", deleted: true });
  });

  it("sends OpenAI an expiry, refuses what a provider has no place for", async () => {
    // The workspace has its openai and anthropic keys from the test before.
    const send = async (provider: string, fields: Record<string, string>) => {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.set(name, value);
      form.set("file", new Blob(["hello"]), "notes.txt");
      const res = await fetch(`${gw.apiUrl}/files?provider=${provider}`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
      return { status: res.status, message: ((await res.json()) as { error?: { message?: string } }).error?.message };
    };
    const expiring = { purpose: "batch", "expires_after[anchor]": "created_at", "expires_after[seconds]": "3600" };
    expect((await send("openai", expiring)).status).toBe(200);
    expect(fake.forms.at(-1)).toEqual(expiring);
    expect((await send("openai", { ...expiring, "expires_after[seconds]": "60" })).message).toMatch(/expires_after\[seconds\]: must be a whole number from 3600/);
    expect((await send("anthropic", { purpose: "user_data" })).message).toBe("Invalid body: purpose: Anthropic's Files API takes none");
    expect((await send("anthropic", { "expires_after[anchor]": "created_at", "expires_after[seconds]": "3600" })).status).toBe(400);
    const listed = await gw.call("GET", "/files?provider=anthropic&order=asc", { key });
    expect(listed.status).toBe(400);
    expect(listed.body.error?.message).toMatch(/newest first/);
  });

  it("streams a provider's file at the pace its client reads", async () => {
    // The workspace has its openai key from the test before.
    const paused = await new Promise<IncomingMessage>((resolve, reject) => {
      get(`${gw.apiUrl}/files/file-large/content?provider=openai`, { headers: { authorization: `Bearer ${key}` } }, resolve).on("error", reject);
    });
    expect(paused.statusCode).toBe(200);
    expect(paused.headers["content-length"]).toBe(String(largeFileBytes));
    paused.pause();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // What the sockets between hold, not the file: the gateway reads no faster than its client.
    expect(fake.largeSent).toBeLessThan(largeFileBytes / 4);
    paused.destroy();
  });

  it("lets only management keys manage provider keys", async () => {
    expect((await gw.call("PUT", `/workspaces/${workspaceId}/provider-keys/openai`, { key, body: { key: "sk-nope-nope" } })).status).toBe(403);
    expect((await gw.call("PUT", `/workspaces/${workspaceId}/provider-keys/dropbox`, { key: bootstrapKey, body: { key: "sk-nope-nope" } })).status).toBe(400);
  });
});
