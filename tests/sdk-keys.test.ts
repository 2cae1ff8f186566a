import { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";

// The official client parses every response with its own schemas and throws on drift.
let gw: TestGateway;
let admin: OpenRouter;
beforeAll(async () => {
  gw = await startTestGateway();
  admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: gw.apiUrl });
});
afterAll(async () => {
  await gw?.stop();
});

describe("@openrouter/sdk against the gateway", () => {
  it("creates, lists, gets, updates and deletes keys", async () => {
    const created = await admin.apiKeys.create({ requestBody: { name: "sdk key", limit: 3, limitReset: "weekly" } });
    expect(created.key).toMatch(/^sk-sy-v1-/);
    expect(created.data).toMatchObject({ name: "sdk key", limit: 3, limitReset: "weekly", disabled: false });
    const hash = created.data.hash;

    const listed = await admin.apiKeys.list({ includeDisabled: true });
    expect(listed.data.map((k) => k.hash)).toContain(hash);

    const got = await admin.apiKeys.get({ hash });
    expect(got.data.name).toBe("sdk key");

    const updated = await admin.apiKeys.update({ hash, requestBody: { disabled: true, limit: 4, limitReset: null, includeByokInLimit: true, name: "renamed" } });
    expect(updated.data).toMatchObject({ disabled: true, limit: 4, limitReset: null, includeByokInLimit: true, name: "renamed" });

    const deleted = await admin.apiKeys.delete({ hash });
    expect(deleted.deleted).toBe(true);
  });

  it("keeps the partner's end user a key is made for, and refuses a secret of the partner's", async () => {
    const created = await admin.apiKeys.create({ requestBody: { name: "for a partner's user", external: { user: "user-1" } } });
    expect(created.data.externalUser).toBe("user-1");
    expect((await admin.apiKeys.get({ hash: created.data.hash })).data.externalUser).toBe("user-1");
    expect((await admin.apiKeys.list()).data.find((k) => k.hash === created.data.hash)?.externalUser).toBe("user-1");
    const partnerSecret = admin.apiKeys.create({ requestBody: { name: "partner secret", external: { user: "user-2", apiKey: "p".repeat(40) } } });
    await expect(partnerSecret).rejects.toMatchObject({ statusCode: 400, body: expect.stringContaining("external.api_key") });
  });

  it("reads the calling key's metadata", async () => {
    const created = await admin.apiKeys.create({ requestBody: { name: "inference" } });
    const user = new OpenRouter({ apiKey: created.key, serverURL: gw.apiUrl });
    const me = await user.apiKeys.getCurrentKeyMetadata();
    expect(me.data).toMatchObject({ isManagementKey: false, usage: 0, limit: null, label: created.data.label });
    const adminMe = await admin.apiKeys.getCurrentKeyMetadata();
    expect(adminMe.data.isManagementKey).toBe(true);
  });

  it("surfaces the spec's errors as the SDK's typed errors", async () => {
    const created = await admin.apiKeys.create({ requestBody: { name: "not management" } });
    const user = new OpenRouter({ apiKey: created.key, serverURL: gw.apiUrl });
    await expect(user.apiKeys.list()).rejects.toMatchObject({ statusCode: 403 });
    await expect(admin.apiKeys.get({ hash: "c".repeat(64) })).rejects.toMatchObject({ statusCode: 404 });
    await expect(admin.apiKeys.update({ hash: created.data.hash, requestBody: { limit: -1 } })).rejects.toMatchObject({ statusCode: 400 });
  });

  it("manages workspaces", async () => {
    const created = await admin.workspaces.create({ createWorkspaceRequest: { name: "SDK", slug: "sdk" } });
    expect(created.data).toMatchObject({ name: "SDK", slug: "sdk" });
    const page = await admin.workspaces.list();
    expect(page.result.data.map((w) => w.slug)).toContain("sdk");
    const got = await admin.workspaces.get({ id: created.data.id });
    expect(got.data.id).toBe(created.data.id);
    const updated = await admin.workspaces.update({ id: created.data.id, updateWorkspaceRequest: { description: "from the sdk" } });
    expect(updated.data.description).toBe("from the sdk");
    const deleted = await admin.workspaces.delete({ id: created.data.id });
    expect(deleted.deleted).toBe(true);
  });
});
