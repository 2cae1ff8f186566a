import { createHash } from "node:crypto";
import type * as Crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { hashSecret, migrate, openDatabase, outboxSink, type Db, type HttpError } from "@switchyard/runtime";
import { createTestDatabase, type TestDatabase } from "../../../../tests/support/postgres.js";
import { getKeyRow, type KeyDeps } from "../keys/service.js";
import { migrations, schema } from "../migrations.js";
import { createOrganization } from "../organizations.js";
import { appIdOf, createAuthCode, exchangeAuthCode, hashCode } from "./codes.js";

// Lets one test make two codes collide; every other call gets real random bytes.
const fixedRandom = vi.hoisted(() => ({ bytes: undefined as Buffer | undefined }));
vi.mock("node:crypto", async (importOriginal) => {
  const crypto = await importOriginal<typeof Crypto>();
  return { ...crypto, randomBytes: (size: number) => fixedRandom.bytes ?? crypto.randomBytes(size) };
});

let database: TestDatabase;
let db: Db;
let deps: KeyDeps;
let caller: { organizationId: string; workspaceId: string; keyHash: string };

beforeAll(async () => {
  database = await createTestDatabase();
  db = await openDatabase({ url: database.url });
  await migrate(db, schema, migrations);
  deps = { db, events: outboxSink(schema, { wake: () => undefined }) };
  const org = await createOrganization(deps, "PKCE unit");
  caller = { organizationId: org.organizationId, workspaceId: org.workspaceId, keyHash: hashSecret(org.managementKey) };
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
});

const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const challenge = createHash("sha256").update(verifier).digest("base64url");
const callback_url = "https://app.example/cb";

const statusOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: HttpError) => error.status,
  );

describe("createAuthCode", () => {
  it("stores only the code's hash, with a ten-minute lifetime", async () => {
    const code = await createAuthCode(db, caller, { callback_url, code_challenge: challenge, code_challenge_method: "S256" });
    expect(code.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(code.app_id).toBe(appIdOf(caller.organizationId));
    const rows = await db.query<{ code_hash: string; seconds: number }>(
      `SELECT code_hash, extract(epoch FROM expires_at - created_at)::int AS seconds FROM identity.auth_codes WHERE code_hash = $1`,
      [hashCode(code.id)],
    );
    expect(rows).toEqual([{ code_hash: hashCode(code.id), seconds: 600 }]);
    const raw = await db.query(`SELECT 1 FROM identity.auth_codes WHERE code_hash = $1`, [code.id]);
    expect(raw).toEqual([]);
  });

  it("answers 409 when a new code collides with a stored one", async () => {
    fixedRandom.bytes = Buffer.alloc(32, 7);
    try {
      await createAuthCode(db, caller, { callback_url });
      await expect(createAuthCode(db, caller, { callback_url })).rejects.toMatchObject({
        status: 409,
        message: "resource conflict, retry later",
      });
    } finally {
      fixedRandom.bytes = undefined;
    }
  });

  it("removes codes that expired more than a day ago when it makes a new one", async () => {
    const old = await createAuthCode(db, caller, { callback_url });
    const recent = await createAuthCode(db, caller, { callback_url });
    await db.query(`UPDATE identity.auth_codes SET expires_at = now() - interval '25 hours' WHERE code_hash = $1`, [hashCode(old.id)]);
    await db.query(`UPDATE identity.auth_codes SET expires_at = now() - interval '1 hour' WHERE code_hash = $1`, [hashCode(recent.id)]);
    await createAuthCode(db, caller, { callback_url });
    const left = await db.query<{ code_hash: string }>(`SELECT code_hash FROM identity.auth_codes WHERE code_hash = ANY($1)`, [
      [hashCode(old.id), hashCode(recent.id)],
    ]);
    expect(left).toEqual([{ code_hash: hashCode(recent.id) }]);
  });

  it("refuses a method without a challenge and an expiry in the past", async () => {
    await expect(createAuthCode(db, caller, { callback_url, code_challenge_method: "S256" })).rejects.toMatchObject({ status: 400 });
    const past = new Date(Date.now() - 1000).toISOString();
    await expect(createAuthCode(db, caller, { callback_url, expires_at: past })).rejects.toMatchObject({ status: 400 });
  });
});

describe("exchangeAuthCode", () => {
  it("refuses a code past its ten minutes, and mints nothing", async () => {
    const code = await createAuthCode(db, caller, { callback_url, code_challenge: challenge, code_challenge_method: "S256" });
    await db.query(`UPDATE identity.auth_codes SET expires_at = now() - interval '1 second' WHERE code_hash = $1`, [hashCode(code.id)]);
    await expect(exchangeAuthCode(deps, { code: code.id, code_verifier: verifier })).rejects.toMatchObject({
      status: 403,
      message: "Invalid authorization code or code_verifier",
    });
    const [row] = await db.query<{ used_at: Date | null; key_hash: string | null }>(
      `SELECT used_at, key_hash FROM identity.auth_codes WHERE code_hash = $1`,
      [hashCode(code.id)],
    );
    expect(row).toEqual({ used_at: null, key_hash: null });
  });

  it("refuses a code whose key would already have expired", async () => {
    const code = await createAuthCode(db, caller, { callback_url, expires_at: new Date(Date.now() + 60_000).toISOString() });
    await db.query(`UPDATE identity.auth_codes SET key_expires_at = now() - interval '1 second' WHERE code_hash = $1`, [hashCode(code.id)]);
    expect(await statusOf(exchangeAuthCode(deps, { code: code.id }))).toBe(403);
  });

  it("refuses a code whose management key was disabled since", async () => {
    const other = await createOrganization(deps, "PKCE unit, revoked");
    const otherCaller = { organizationId: other.organizationId, workspaceId: other.workspaceId, keyHash: hashSecret(other.managementKey) };
    const code = await createAuthCode(db, otherCaller, { callback_url });
    await db.query(`UPDATE identity.api_keys SET disabled = true WHERE hash = $1`, [otherCaller.keyHash]);
    expect(await statusOf(exchangeAuthCode(deps, { code: code.id }))).toBe(403);
  });

  it("leaves the code usable after a wrong verifier, and records the key it minted", async () => {
    const code = await createAuthCode(db, caller, { callback_url, code_challenge: challenge, code_challenge_method: "S256" });
    expect(await statusOf(exchangeAuthCode(deps, { code: code.id, code_verifier: "x".repeat(43) }))).toBe(403);
    const { key } = await exchangeAuthCode(deps, { code: code.id, code_verifier: verifier });
    const [row] = await db.query<{ key_hash: string }>(`SELECT key_hash FROM identity.auth_codes WHERE code_hash = $1`, [hashCode(code.id)]);
    expect(row?.key_hash).toBe(hashSecret(key));
    expect(await getKeyRow(db, hashSecret(key))).toMatchObject({ name: "PKCE key", is_management: false, workspace_id: caller.workspaceId });
  });

  it("checks a challenge given without a method as plain, or as S256 when the exchange says so", async () => {
    const plain = await createAuthCode(db, caller, { callback_url, code_challenge: verifier });
    expect(await statusOf(exchangeAuthCode(deps, { code: plain.id, code_verifier: verifier }))).toBe(200);
    const hashed = await createAuthCode(db, caller, { callback_url, code_challenge: challenge });
    expect(await statusOf(exchangeAuthCode(deps, { code: hashed.id, code_verifier: verifier }))).toBe(403);
    expect(await statusOf(exchangeAuthCode(deps, { code: hashed.id, code_verifier: verifier, code_challenge_method: "S256" }))).toBe(200);
  });

  it("refuses the challenge itself as a plain verifier for an S256 code", async () => {
    const code = await createAuthCode(db, caller, { callback_url, code_challenge: challenge, code_challenge_method: "S256" });
    expect(await statusOf(exchangeAuthCode(deps, { code: code.id, code_verifier: challenge, code_challenge_method: "plain" }))).toBe(403);
    expect(await statusOf(exchangeAuthCode(deps, { code: code.id, code_verifier: challenge }))).toBe(403);
  });

  it("mints exactly one key from concurrent exchanges", async () => {
    const code = await createAuthCode(db, caller, { callback_url, code_challenge: challenge, code_challenge_method: "S256" });
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () => statusOf(exchangeAuthCode(deps, { code: code.id, code_verifier: verifier }))),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 403)).toHaveLength(9);
  });
});
