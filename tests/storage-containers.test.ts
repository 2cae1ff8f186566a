import { OpenRouter } from "@openrouter/sdk";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let key: string;
let sdk: OpenRouter;
let owner: { organization_id: string; workspace_id: string };

beforeAll(async () => {
  gw = await startTestGateway();
  const created = await gw.call("POST", "/keys", { body: { name: "sandbox user" } });
  key = String(created.body.key);
  sdk = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl, retryConfig: { strategy: "none" } });
  const me = await gw.call("GET", "/key", { key });
  owner = { organization_id: String(me.body.data?.organization_id), workspace_id: String(me.body.data?.workspace_id) };
});
afterAll(() => gw.stop());

const now = new Date("2026-11-24T10:00:00Z");
type Extra = { deleted?: string[]; synced_at?: string; complete?: boolean };
const sync = (containerId: string, files: Array<{ path: string; bytes: number; content_base64?: string }>, who = owner, extra: Extra = {}) =>
  gw.standalone.storage.syncContainerFiles(containerId, { ...who, files: files.map((f) => ({ ...f, modified_at: now.toISOString() })), ...extra });
const idOf = (path: string) => `cfile_${Buffer.from(path).toString("base64url")}`;

describe("container files", () => {
  it("lists what a sandbox synced in path order, with ids from the paths, through @openrouter/sdk", async () => {
    const syncedAt = new Date("2026-11-24T10:05:00Z");
    await sync(
      "sess_demo",
      [
        { path: "out/b.txt", bytes: 2 },
        { path: "README.md", bytes: 10, content_base64: Buffer.from("# results!").toString("base64") },
        { path: "out/a.txt", bytes: 1 },
      ],
      owner,
      { synced_at: syncedAt.toISOString() },
    );
    const list = await sdk.containers.listContainerFiles({ containerId: "sess_demo" });
    expect(list.data.map((f) => f.path)).toEqual(["README.md", "out/a.txt", "out/b.txt"]);
    // created_at is when the file was last synced, not when it was last modified in the sandbox.
    expect(list.data[0]).toMatchObject({ id: idOf("README.md"), object: "container.file", containerId: "sess_demo", bytes: 10, createdAt: syncedAt.getTime() / 1000, source: "assistant" });
    expect(list).toMatchObject({ object: "list", firstId: idOf("README.md"), lastId: idOf("out/b.txt"), hasMore: false });
    expect(await sdk.containers.getContainerFile({ containerId: "sess_demo", fileId: idOf("out/a.txt") })).toMatchObject({ path: "out/a.txt", bytes: 1 });
    // A body synced along can be downloaded; one that was not is a 404 that says so.
    const body = await sdk.containers.downloadContainerFileContent({ containerId: "sess_demo", fileId: idOf("README.md") });
    expect(await new Response(body).text()).toBe("# results!");
    const missing = await gw.call("GET", `/containers/sess_demo/files/${idOf("out/a.txt")}/content`, { key });
    expect(missing.status).toBe(404);
    expect(missing.body.error?.message).toMatch(/not synced/);
  });

  it("updates a file synced again, and keeps a restarted session's container apart", async () => {
    await sync("sess_again", [{ path: "log.txt", bytes: 5 }], owner, { synced_at: "2026-11-24T10:00:00Z" });
    const before = Math.floor(Date.now() / 1000);
    await sync("sess_again", [{ path: "log.txt", bytes: 9 }]);
    // Without a sync time from the sandbox, it is the time storage recorded the file.
    const [again] = (await sdk.containers.listContainerFiles({ containerId: "sess_again" })).data;
    expect(again!.createdAt).toBeGreaterThanOrEqual(before);
    expect(again!.createdAt).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    await sync("sess_again-r7f3a", [{ path: "fresh.txt", bytes: 1 }]);
    expect((await sdk.containers.listContainerFiles({ containerId: "sess_again" })).data.map((f) => [f.path, f.bytes])).toEqual([["log.txt", 9]]);
    expect((await sdk.containers.listContainerFiles({ containerId: "sess_again-r7f3a" })).data.map((f) => f.path)).toEqual(["fresh.txt"]);
  });

  it("pages with after=last_id through every file exactly once; has_more never lies", async () => {
    const path = fc.stringMatching(/^[a-zA-Z0-9_.-]{1,12}(\/[a-zA-Z0-9_.-]{1,12}){0,2}$/).filter((p) => p.split("/").every((s) => s !== "." && s !== ".."));
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(path, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 7 }), async (paths, limit) => {
        const container = `sess_paging${run++}`;
        await sync(container, paths.map((p) => ({ path: p, bytes: p.length })));
        const seen: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await sdk.containers.listContainerFiles({ containerId: container, limit, ...(after ? { after } : {}) });
          seen.push(...page.data.map((f) => f.path));
          expect(page.hasMore).toBe(seen.length < paths.length);
          if (!page.hasMore) break;
          after = page.lastId!;
        }
        // Byte order of the UTF-8 paths, which is what lexicographic means for the API.
        expect(seen).toEqual([...paths].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { numRuns: 8 },
    );
  });

  it("lists another workspace's container and unknown ones as empty, and answers 404 for their files", async () => {
    const ws = await gw.call("POST", "/workspaces", { body: { name: "other sandbox", slug: "other-sandbox" } });
    const other = { organization_id: owner.organization_id, workspace_id: String((ws.body.data as unknown as Record<string, unknown>).id) };
    await sync("sess_theirs", [{ path: "secret.txt", bytes: 3 }], other);
    // The spec's list has no 404: a container with nothing of the caller's is an empty page, alike for all.
    const empty = { object: "list", data: [], first_id: null, last_id: null, has_more: false };
    for (const container of ["sess_theirs", "sess_nobody"]) {
      const res = await gw.call("GET", `/containers/${container}/files`, { key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(empty);
      expect(await sdk.containers.listContainerFiles({ containerId: container })).toEqual({ object: "list", data: [], firstId: null, lastId: null, hasMore: false });
    }
    expect((await gw.call("GET", `/containers/sess_theirs/files/${idOf("secret.txt")}`, { key })).status).toBe(404);
    expect((await gw.call("GET", `/containers/sess_demo/files/${idOf("missing.txt")}`, { key })).status).toBe(404);
    // A sandbox may not write into a container another workspace owns.
    await expect(sync("sess_theirs", [{ path: "x", bytes: 1 }])).rejects.toThrow(/belongs to another workspace/);
  });

  it.each([
    ["a file id that is not base64url of a path", "/containers/sess_demo/files/cfile_!!", 400],
    ["a file id without the prefix", "/containers/sess_demo/files/file_abc", 400],
    ["an after that is not a file id", "/containers/sess_demo/files?after=nope", 400],
    ["a limit over 1000", "/containers/sess_demo/files?limit=1001", 400],
    ["a limit of 0", "/containers/sess_demo/files?limit=0", 400],
    ["a container id with a slash", "/containers/sess%2Fdemo/files", 400],
  ])("refuses %s", async (_what, path, status) => {
    expect((await gw.call("GET", path, { key })).status).toBe(status);
  });

  // Ids whose paths no sandbox can sync: a NUL (which Postgres cannot take), another control character, too long.
  it.each([
    ["a file id of a NUL", `/containers/sess_demo/files/cfile_AA`, /^Invalid path: file_id: /],
    ["a file id of NULs, long", `/containers/sess_demo/files/cfile_${"A".repeat(4000)}`, /^Invalid path: file_id: /],
    ["a file id with a NUL inside a path", `/containers/sess_demo/files/${idOf("out/a\0.txt")}`, /^Invalid path: file_id: /],
    ["a content id of a NUL", `/containers/sess_demo/files/cfile_AA/content`, /^Invalid path: file_id: /],
    ["a file id with an escape character", `/containers/sess_demo/files/${idOf("out/\x1b[31m.txt")}`, /^Invalid path: file_id: /],
    ["a file id of a path longer than a sandbox may sync", `/containers/sess_demo/files/${idOf("a".repeat(1025))}`, /^Invalid path: file_id: /],
    ["an after of a NUL", `/containers/sess_demo/files?after=cfile_AA`, /^Invalid query: after: /],
    ["an after with a control character", `/containers/sess_demo/files?after=${idOf("README.md\n")}`, /^Invalid query: after: /],
  ])("refuses %s with a 400 that names the field", async (_what, path, message) => {
    const res = await gw.call("GET", path, { key });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(message);
  });

  it("drops files the sandbox deleted", async () => {
    const body = Buffer.from("gone soon").toString("base64");
    await sync("sess_deleting", [
      { path: "keep.txt", bytes: 1 },
      { path: "out/gone.txt", bytes: 9, content_base64: body },
    ]);
    await sync("sess_deleting", [], owner, { deleted: ["out/gone.txt", "never-synced.txt"] });
    expect((await sdk.containers.listContainerFiles({ containerId: "sess_deleting" })).data.map((f) => f.path)).toEqual(["keep.txt"]);
    expect((await gw.call("GET", `/containers/sess_deleting/files/${idOf("out/gone.txt")}`, { key })).status).toBe(404);
  });

  it("after a complete report, keeps only the files that report wrote", async () => {
    await sync("sess_whole", [
      { path: "a.txt", bytes: 1 },
      { path: "b.txt", bytes: 1, content_base64: Buffer.from("b").toString("base64") },
    ]);
    const syncedAt = new Date().toISOString();
    await sync("sess_whole", [{ path: "a.txt", bytes: 2 }], owner, { synced_at: syncedAt });
    await sync("sess_whole", [{ path: "c.txt", bytes: 1 }], owner, { synced_at: syncedAt, complete: true });
    expect((await sdk.containers.listContainerFiles({ containerId: "sess_whole" })).data.map((f) => [f.path, f.bytes])).toEqual([
      ["a.txt", 2],
      ["c.txt", 1],
    ]);
    // A complete report of an empty tree empties the list.
    await sync("sess_whole", [], owner, { complete: true });
    expect((await sdk.containers.listContainerFiles({ containerId: "sess_whole" })).data).toEqual([]);
  });

  it("refuses synced paths that leave the container", async () => {
    for (const path of ["/etc/passwd", "../up.txt", "a/../../b", "a//b", "a\\b"]) {
      await expect(sync("sess_demo", [{ path, bytes: 1 }])).rejects.toThrow(/relative path inside the container/);
    }
    await expect(sync("sess_demo", [{ path: "x.txt", bytes: 3, content_base64: Buffer.from("four").toString("base64") }])).rejects.toThrow(/4 bytes, not 3/);
    await expect(sync("sess_demo", [], owner, { deleted: ["../up.txt"] })).rejects.toThrow(/relative path inside the container/);
    await expect(sync("sess_demo", [])).rejects.toThrow(/must name files, deleted paths, or be complete/);
    await expect(sync("sess_demo", [{ path: "twice.txt", bytes: 1 }], owner, { deleted: ["twice.txt"] })).rejects.toThrow(/must name each path once/);
  });
});
