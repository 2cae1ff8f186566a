import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.stop();
});

const createKey = async (body: Record<string, unknown> = {}, key?: string) => {
  const res = await gw.call("POST", "/keys", { body: { name: "test key", ...body }, ...(key ? { key } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { secret: res.body.key as string, record: res.body.data as Record<string, unknown> };
};

describe("authentication", () => {
  it("answers 401 without an Authorization header", async () => {
    const res = await gw.call("GET", "/key", { key: null });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 401, message: "Missing Authentication header" } });
  });

  it("answers unknown and malformed keys with the same 401 body", async () => {
    const { secret } = await createKey();
    const unknown = `sk-sy-v1-${"0".repeat(64)}${"f".repeat(8)}`;
    const tampered = secret.slice(0, -1) + (secret.endsWith("a") ? "b" : "a");
    const responses = await Promise.all(
      [unknown, tampered, "garbage", "x".repeat(40)].map((key) => gw.call("GET", "/key", { key })),
    );
    for (const res of responses) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual(responses[0]!.body);
    }
  });

  it("refuses an expired key", async () => {
    const { secret } = await createKey({ expires_at: new Date(Date.now() + 1500).toISOString() });
    expect((await gw.call("GET", "/key", { key: secret })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    const res = await gw.call("GET", "/key", { key: secret });
    expect(res.status).toBe(401);
    expect(res.body.error?.message).toMatch(/expired/);
  });
});

describe("POST /keys and GET /key", () => {
  it("creates a key whose secret is shown once and works at once", async () => {
    const { secret, record } = await createKey({ limit: 12.5, limit_reset: "monthly", include_byok_in_limit: true });
    expect(secret).toMatch(/^sk-sy-v1-[0-9a-f]{72}$/);
    expect(record).toMatchObject({
      name: "test key",
      disabled: false,
      limit: 12.5,
      limit_remaining: 12.5,
      limit_reset: "monthly",
      include_byok_in_limit: true,
      usage: 0,
      usage_daily: 0,
      usage_weekly: 0,
      usage_monthly: 0,
      byok_usage: 0,
      external_user: null,
      expires_at: null,
      is_management_key: false,
    });
    expect(record.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(String(record.label)).not.toContain(secret.slice(12, -3));
    const me = await gw.call("GET", "/key", { key: secret });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ hash: record.hash, is_management_key: false, limit: 12.5, usage: 0 });
    const listed = await gw.call("GET", `/keys/${String(record.hash)}`);
    expect(listed.body.data).not.toHaveProperty("key");
  });

  it("rejects invalid bodies with a message naming the field", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /name/],
      [{ name: "" }, /name/],
      [{ name: "x", limit: -1 }, /limit/],
      [{ name: "x", limit: "10" }, /limit/],
      [{ name: "x", limit_reset: "yearly" }, /limit_reset/],
      [{ name: "x", include_byok_in_limit: "yes" }, /include_byok_in_limit/],
      [{ name: "x", expires_at: "tomorrow" }, /expires_at/],
      [{ name: "x", expires_at: "2020-01-01T00:00:00Z" }, /expires_at/],
      [{ name: "x", expires_at: "2030-02-30T00:00:00Z" }, /expires_at/],
      [{ name: "x", expires_at: "2029-02-29T00:00:00+02:00" }, /expires_at/],
      [{ name: "x", expires_at: "9999-12-31T23:59:59.9999999Z" }, /expires_at/],
      [{ name: "x", expires_at: "9999-12-31T23:30:00-01:00" }, /expires_at/],
      [{ name: "x", limit: 4e-13 }, /limit/],
      [{ name: "x", limit: 1.0000000000001 }, /limit/],
      [{ name: "x", workspace_id: "not-a-uuid" }, /workspace_id/],
      [{ name: "x", workspace_id: "9a1b6a39-2f43-4c43-9ad9-6a4f0cc7a001" }, /workspace_id/],
      [{ name: "x", colour: "blue" }, /colour/],
    ];
    for (const [body, message] of cases) {
      const res = await gw.call("POST", "/keys", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error?.code).toBe(400);
      expect(res.body.error?.message).toMatch(message);
    }
    const bad = await gw.call("POST", "/keys", { body: "{not json" });
    expect(bad.status).toBe(400);
  });

  it("lets only management keys manage keys", async () => {
    const { secret } = await createKey();
    for (const [method, path] of [
      ["GET", "/keys"],
      ["POST", "/keys"],
      ["PATCH", `/keys/${"a".repeat(64)}`],
      ["GET", `/keys/${"a".repeat(64)}`],
      ["DELETE", `/keys/${"a".repeat(64)}`],
    ] as const) {
      const res = await gw.call(method, path, { key: secret, ...(method === "GET" ? {} : { body: { name: "x" } }) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error?.message).toBe("Only management keys can perform this operation");
    }
  });
});

describe("PATCH /keys/{hash}", () => {
  it("updates every field, handles nulls and moves updated_at", async () => {
    const { record } = await createKey({ limit: 5, limit_reset: "daily" });
    const hash = String(record.hash);
    const before = await gw.call("GET", `/keys/${hash}`);
    const res = await gw.call("PATCH", `/keys/${hash}`, {
      body: { name: "renamed", limit: 7.25, limit_reset: "weekly", include_byok_in_limit: true, disabled: false },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: "renamed", limit: 7.25, limit_remaining: 7.25, limit_reset: "weekly", include_byok_in_limit: true });
    expect(Date.parse(String(res.body.data?.updated_at))).toBeGreaterThan(Date.parse(String(before.body.data?.updated_at ?? before.body.data?.created_at)) - 1);
    const cleared = await gw.call("PATCH", `/keys/${hash}`, { body: { limit: null, limit_reset: null } });
    expect(cleared.body.data).toMatchObject({ limit: null, limit_remaining: null, limit_reset: null, name: "renamed" });
    expect(cleared.body.data?.updated_at).not.toBe(res.body.data?.updated_at);
  });

  it("keeps a limit to the picodollar", async () => {
    const { record } = await createKey({ limit: 0.123456789012 });
    expect(record.limit).toBe(0.123456789012);
    const res = await gw.call("PATCH", `/keys/${String(record.hash)}`, { body: { limit: 5e-12 } });
    expect(res.body.data).toMatchObject({ limit: 5e-12, limit_remaining: 5e-12 });
    // A limit finer than the picodollar would be stored rounded (to 0 below it): refused, the old limit kept.
    for (const limit of [4e-13, 123.4567890123456]) {
      const refused = await gw.call("PATCH", `/keys/${String(record.hash)}`, { body: { limit } });
      expect(refused.status, String(limit)).toBe(400);
      expect(refused.body.error?.message).toMatch(/limit/);
    }
    expect((await gw.call("GET", `/keys/${String(record.hash)}`)).body.data).toMatchObject({ limit: 5e-12 });
  });

  it("keeps an expiry up to the last millisecond before the year 10000", async () => {
    const { record } = await createKey({ expires_at: "9999-12-31T23:59:59.999Z" });
    expect(record.expires_at).toBe("9999-12-31T23:59:59.999Z");
  });

  it("disables and re-enables a key, effective on the next request", async () => {
    const { secret, record } = await createKey();
    expect((await gw.call("GET", "/key", { key: secret })).status).toBe(200);
    const disabled = await gw.call("PATCH", `/keys/${String(record.hash)}`, { body: { disabled: true } });
    expect(disabled.body.data?.disabled).toBe(true);
    const refused = await gw.call("GET", "/key", { key: secret });
    expect(refused.status).toBe(401);
    expect(refused.body.error?.message).toMatch(/disabled/);
    await gw.call("PATCH", `/keys/${String(record.hash)}`, { body: { disabled: false } });
    expect((await gw.call("GET", "/key", { key: secret })).status).toBe(200);
  });

  it("rejects invalid input", async () => {
    const { record } = await createKey();
    const hash = String(record.hash);
    const cases: [string, unknown, number, RegExp][] = [
      [hash, { limit_reset: "yearly" }, 400, /limit_reset/],
      [hash, { limit: -5 }, 400, /limit/],
      [hash, { disabled: "true" }, 400, /disabled/],
      [hash, { name: 42 }, 400, /name/],
      [hash, { include_byok_in_limit: 1 }, 400, /include_byok_in_limit/],
      [hash, { unknown_field: 1 }, 400, /unknown_field/],
      ["not-a-hash", { name: "x" }, 400, /hash/],
      ["b".repeat(64), { name: "x" }, 404, /not found/i],
    ];
    for (const [target, body, status, message] of cases) {
      const res = await gw.call("PATCH", `/keys/${target}`, { body });
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error?.code).toBe(status);
      expect(res.body.error?.message).toMatch(message);
    }
  });
});

describe("GET /keys, GET and DELETE /keys/{hash}", () => {
  it("paginates by offset and hides disabled keys unless asked", async () => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await createKey({ name: `page-${i}` }));
    await gw.call("PATCH", `/keys/${String(made[0]!.record.hash)}`, { body: { disabled: true } });
    const all = await gw.call("GET", "/keys?include_disabled=true&limit=1000");
    const enabled = await gw.call("GET", "/keys?limit=1000");
    expect(all.body.total_count).toBe((enabled.body.total_count as number) + countDisabled(all.body.data as Array<Record<string, unknown>>));
    const first = await gw.call("GET", "/keys?include_disabled=true&limit=2&offset=0");
    const second = await gw.call("GET", "/keys?include_disabled=true&limit=2&offset=2");
    expect(first.body.data).toHaveLength(2);
    const hashes = [...(first.body.data ?? []), ...(second.body.data ?? [])].map((k) => k.hash);
    expect(new Set(hashes).size).toBe(hashes.length);
    for (const q of ["limit=0", "limit=1001", "offset=-1", "limit=abc", "include_disabled=maybe", "workspace_id=nope"]) {
      const res = await gw.call("GET", `/keys?${q}`);
      expect(res.status, q).toBe(400);
    }
  });

  it("deletes a key, which then stops working", async () => {
    const { secret, record } = await createKey();
    expect((await gw.call("GET", "/key", { key: secret })).status).toBe(200);
    const res = await gw.call("DELETE", `/keys/${String(record.hash)}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: true });
    expect((await gw.call("GET", "/key", { key: secret })).status).toBe(401);
    expect((await gw.call("GET", `/keys/${String(record.hash)}`)).status).toBe(404);
    expect((await gw.call("DELETE", `/keys/${String(record.hash)}`)).status).toBe(404);
  });
});

describe("organizations", () => {
  it("keeps each organization's keys invisible to the others", async () => {
    const other = await gw.standalone.identity.createOrganization("Other");
    const { record } = await createKey();
    const hash = String(record.hash);
    for (const [method, body] of [["GET", undefined], ["PATCH", { name: "stolen" }], ["DELETE", undefined]] as const) {
      const res = await gw.call(method, `/keys/${hash}`, { key: other.managementKey, ...(body ? { body } : {}) });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 404, message: "API key not found" } });
    }
    const list = await gw.call("GET", "/keys?limit=1000", { key: other.managementKey });
    expect((list.body.data ?? []).map((k) => k.hash)).not.toContain(hash);
    const mine = await gw.call("GET", `/keys/${hash}`);
    expect(mine.body.data?.name).toBe("test key");
  });
});

function countDisabled(keys: Array<Record<string, unknown>>): number {
  return keys.filter((k) => k.disabled === true).length;
}
