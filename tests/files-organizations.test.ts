import { createServer } from "node:http";
import { createServiceSigner } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeFilesProvider, type FakeFilesProvider } from "./support/fake-files.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

const internalSecret = "files-organizations-internal-secret-0123456789";
const theirProviderKey = "sk-orgY-openai-7777";

let gw: TestGateway;
let fake: FakeFilesProvider;
/** Organization X: the bootstrap management key's. */
let ours: { organizationId: string; workspaceId: string };
/** Organization Y, made by the operator, with its own management key and its own OpenAI key. */
let theirs: { organizationId: string; workspaceId: string; managementKey: string };

beforeAll(async () => {
  fake = await startFakeFilesProvider();
  gw = await startTestGateway({
    OPENAI_BASE_URL: fake.baseUrl,
    SWITCHYARD_ENCRYPTION_KEY: "files-organizations-encryption-secret-0123456789",
    SWITCHYARD_INTERNAL_SECRET: internalSecret,
  });
  const me = await gw.call("GET", "/key");
  ours = { organizationId: String(me.body.data?.organization_id), workspaceId: String(me.body.data?.workspace_id) };
  theirs = await gw.standalone.identity.createOrganization("Elsewhere");
  const put = await gw.call("PUT", `/workspaces/${theirs.workspaceId}/provider-keys/openai`, { key: theirs.managementKey, body: { key: theirProviderKey } });
  expect(put.status).toBe(200);
});
afterAll(async () => {
  await gw.stop();
  await fake.stop();
});

/** Multipart upload of a small CSV, as curl's `-F file=@table.csv` sends it. */
const uploadCsv = (query: string, key: string) => {
  const form = new FormData();
  form.set("file", new Blob([Buffer.from("a,b\n1,2\n")]), "table.csv");
  form.set("purpose", "user_data");
  return fetch(`${gw.apiUrl}/files?${query}`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
};

const sentTheirKey = () => fake.credentials.includes(`Bearer ${theirProviderKey}`);

describe("a management key naming a workspace of another organization", () => {
  it("cannot see that workspace itself", async () => {
    expect((await gw.call("GET", `/workspaces/${theirs.workspaceId}`)).status).toBe(404);
  });

  it("gets 404 from /files?provider=openai, and the other organization's key is never opened", async () => {
    const where = `provider=openai&workspace_id=${theirs.workspaceId}`;
    const listed = await gw.call("GET", `/files?${where}`);
    expect(listed.status).toBe(404);
    expect(listed.body.error?.message).toBe("Workspace not found");
    expect((await uploadCsv(where, bootstrapKey)).status).toBe(404);
    for (const [method, path] of [
      ["GET", "/files/file-1"],
      ["GET", "/files/file-1/content"],
      ["DELETE", "/files/file-1"],
    ] as const) {
      expect((await gw.call(method, `${path}?${where}`)).status).toBe(404);
    }
    expect(sentTheirKey()).toBe(false);
  });

  it("gets 404 from the gateway's own storage, and the other organization's file is left as it was", async () => {
    const theirUpload = await uploadCsv("", theirs.managementKey);
    expect(theirUpload.status).toBe(200);
    const file = (await theirUpload.json()) as { id: string };
    const where = `workspace_id=${theirs.workspaceId}`;
    expect((await gw.call("GET", `/files?${where}`)).status).toBe(404);
    expect((await uploadCsv(where, bootstrapKey)).status).toBe(404);
    for (const [method, path] of [
      ["GET", `/files/${file.id}`],
      ["GET", `/files/${file.id}/content`],
      ["DELETE", `/files/${file.id}`],
    ] as const) {
      expect((await gw.call(method, `${path}?${where}`)).status).toBe(404);
    }
    const kept = await gw.call("GET", "/files", { key: theirs.managementKey });
    expect((kept.body.data as unknown as Array<{ id: string }>).map((f) => f.id)).toEqual([file.id]);
  });

  it("still reaches a workspace of its own organization, and the other organization still reaches its own key", async () => {
    const ws = await gw.call("POST", "/workspaces", { body: { name: "second", slug: "second" } });
    const second = String((ws.body.data as unknown as Record<string, unknown>).id);
    const uploaded = await uploadCsv(`workspace_id=${second}`, bootstrapKey);
    expect(uploaded.status).toBe(200);
    const listed = await gw.call("GET", `/files?workspace_id=${second}`);
    expect(listed.status).toBe(200);
    expect((listed.body.data as unknown as Array<{ id: string }>).map((f) => f.id)).toEqual([((await uploaded.json()) as { id: string }).id]);
    // Naming one's own workspace is the same as naming none.
    expect((await gw.call("GET", `/files?workspace_id=${ours.workspaceId}`)).status).toBe(200);
    expect((await gw.call("GET", `/files?provider=openai&workspace_id=${theirs.workspaceId}`, { key: theirs.managementKey })).status).toBe(200);
    expect(fake.credentials.at(-1)).toBe(`Bearer ${theirProviderKey}`);
  });
});

describe("identity's internal route that opens a workspace's provider key", () => {
  it("opens it only for the organization the workspace belongs to", async () => {
    const identity = await listenLocal(createServer(gw.standalone.identity.app));
    try {
      const sign = createServiceSigner(internalSecret, "storage");
      const open = async (body: Record<string, unknown>) => {
        const res = await fetch(`${identity.baseUrl.replace(/\/v1$/, "")}/internal/provider-keys/open`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-switchyard-service": await sign() },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as { data?: { key: string | null } } };
      };
      const asked = { workspace_id: theirs.workspaceId, provider: "openai" };
      expect(await open({ ...asked, organization_id: theirs.organizationId })).toEqual({ status: 200, body: { data: { key: theirProviderKey } } });
      expect(await open({ ...asked, organization_id: ours.organizationId })).toEqual({ status: 200, body: { data: { key: null } } });
      expect((await open({ ...asked, organization_id: "not-a-uuid" })).status).toBe(400);
    } finally {
      await identity.stop();
    }
  });
});
