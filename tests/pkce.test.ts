import { createHash } from "node:crypto";
import { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let admin: OpenRouter;
beforeAll(async () => {
  gw = await startTestGateway();
  admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: gw.apiUrl });
});
afterAll(async () => {
  await gw?.stop();
});

const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const s256 = (value: string) => createHash("sha256").update(value).digest("base64url");
const callback_url = "http://localhost:3000/callback";
const invalidCode = { error: { code: 403, message: "Invalid authorization code or code_verifier" } };

async function createCode(body: Record<string, unknown> = {}, key?: string): Promise<string> {
  const res = await gw.call("POST", "/auth/keys/code", { body: { callback_url, ...body }, ...(key ? { key } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return String(res.body.data?.id);
}

const exchange = (body: Record<string, unknown>) => gw.call("POST", "/auth/keys", { key: null, body });

describe("the PKCE flow through @openrouter/sdk", () => {
  it("creates a code with a management key and exchanges it, without a key, for a limited inference key", async () => {
    const { codeChallenge, codeVerifier } = await admin.oAuth.createSHA256CodeChallenge();
    const expiresAt = new Date(Date.now() + 3_600_000);
    const created = await admin.oAuth.createAuthCode({
      requestBody: {
        callbackUrl: "https://app.example/oauth/callback",
        codeChallenge,
        codeChallengeMethod: "S256",
        limit: 5,
        usageLimitType: "monthly",
        keyLabel: "My CLI",
        expiresAt,
      },
    });
    expect(created.data.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Number.isInteger(created.data.appId)).toBe(true);
    expect(Date.parse(created.data.createdAt)).toBeGreaterThan(Date.now() - 60_000);

    const anonymous = new OpenRouter({ serverURL: gw.apiUrl });
    const minted = await anonymous.oAuth.exchangeAuthCodeForAPIKey({
      requestBody: { code: created.data.id, codeVerifier, codeChallengeMethod: "S256" },
    });
    expect(minted).toEqual({ key: expect.stringMatching(/^sk-sy-v1-/), userId: null });

    const me = await new OpenRouter({ apiKey: minted.key, serverURL: gw.apiUrl }).apiKeys.getCurrentKeyMetadata();
    expect(me.data).toMatchObject({ isManagementKey: false, limit: 5, limitRemaining: 5, limitReset: "monthly" });
    expect(new Date(me.data.expiresAt ?? 0).getTime()).toBe(expiresAt.getTime());

    const listed = await admin.apiKeys.list();
    expect(listed.data.find((key) => key.label === me.data.label)).toMatchObject({ name: "My CLI" });
  });
});

describe("POST /auth/keys", () => {
  it("exchanges a plain challenge, and a code made without one", async () => {
    const plain = await createCode({ code_challenge: verifier, code_challenge_method: "plain" });
    const res = await exchange({ code: plain, code_verifier: verifier, code_challenge_method: "plain" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ key: expect.stringMatching(/^sk-sy-v1-/), user_id: null });

    const bare = await createCode();
    expect((await exchange({ code: bare })).status).toBe(200);
  });

  it("mints a working inference key with the code's limit in the caller's workspace", async () => {
    const code = await createCode({ code_challenge: s256(verifier), code_challenge_method: "S256", limit: 2.5, usage_limit_type: "daily" });
    const { body } = await exchange({ code, code_verifier: verifier });
    const key = String(body.key);
    const me = await gw.call("GET", "/key", { key });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ is_management_key: false, limit: 2.5, limit_reset: "daily", expires_at: null });
    const admin = await gw.call("GET", "/key");
    expect(me.body.data?.workspace_id).toBe(admin.body.data?.workspace_id);
    const listed = await gw.call("GET", "/keys?limit=1000");
    expect(listed.body.data?.find((k) => k.hash === me.body.data?.hash)).toMatchObject({ name: "PKCE key" });
    // An inference key cannot make codes of its own.
    const denied = await gw.call("POST", "/auth/keys/code", { key, body: { callback_url } });
    expect(denied.status).toBe(403);
  });

  it("answers every refusal with the same 403: unknown, wrong verifier, missing verifier, wrong method, reused", async () => {
    const code = await createCode({ code_challenge: s256(verifier), code_challenge_method: "S256" });
    const refusals = [
      await exchange({ code: "not-a-code" }),
      await exchange({ code, code_verifier: "W".repeat(43) }),
      await exchange({ code }),
      await exchange({ code, code_verifier: s256(verifier), code_challenge_method: "plain" }),
    ];
    expect((await exchange({ code, code_verifier: verifier })).status).toBe(200);
    refusals.push(await exchange({ code, code_verifier: verifier }));
    for (const res of refusals) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual(invalidCode);
    }
  });

  it("revokes the key a code minted when the code is used again (RFC 6749 §4.1.2)", async () => {
    const code = await createCode({ code_challenge: s256(verifier), code_challenge_method: "S256" });
    const first = await exchange({ code, code_verifier: verifier });
    expect(first.status).toBe(200);
    const key = String(first.body.key);
    expect((await gw.call("GET", "/key", { key })).status).toBe(200);
    // Without the verifier a replay is refused but changes nothing: a stolen code alone cannot revoke.
    expect(await exchange({ code })).toMatchObject({ status: 403, body: invalidCode });
    expect((await gw.call("GET", "/key", { key })).status).toBe(200);
    expect(await exchange({ code, code_verifier: verifier })).toMatchObject({ status: 403, body: invalidCode });
    const revoked = await gw.call("GET", "/key", { key });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error?.message).toBe("API key is disabled");
  });

  it("yields exactly one key from ten concurrent exchanges of one code", async () => {
    const code = await createCode({ code_challenge: s256(verifier), code_challenge_method: "S256" });
    const results = await Promise.all(Array.from({ length: 10 }, () => exchange({ code, code_verifier: verifier })));
    expect(results.map((res) => res.status).sort()).toEqual([200, ...Array<number>(9).fill(403)]);
  });

  it("validates the body before looking at the code", async () => {
    const res = await exchange({ code: "x", code_verifier: "short" });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/code_verifier/);
  });
});

describe("POST /auth/keys/code", () => {
  it("answers with the code, a stable integer app id and the creation time", async () => {
    const [first, second] = await Promise.all([1, 2].map(() => gw.call("POST", "/auth/keys/code", { body: { callback_url } })));
    expect(first?.body.data).toEqual({ id: expect.any(String), app_id: expect.any(Number), created_at: expect.any(String) });
    expect(first?.body.data?.id).not.toBe(second?.body.data?.id);
    expect(first?.body.data?.app_id).toBe(second?.body.data?.app_id);
  });

  it.each([
    "https://myapp.com/auth/callback",
    "https://localhost/cb",
    "http://localhost/cb",
    "http://localhost:8765/cb?state=abc",
    "http://127.0.0.1:3000/callback",
  ])("accepts the callback %s", async (url) => {
    expect((await gw.call("POST", "/auth/keys/code", { body: { callback_url: url } })).status).toBe(200);
  });

  it.each([
    "http://myapp.com/cb",
    "http://localhost.evil.com/cb",
    "http://localhost@evil.com/cb",
    "http://evil.com@localhost/cb",
    "http://user:pass@localhost:3000/cb",
    "https://myapp.com@evil.com/cb",
    "http://127.0.0.1.evil.com/cb",
    "http://evil.com#@localhost",
    "https://myapp.com/cb#fragment",
    "http://localhost:3000/callback#",
    "http://127.1/cb",
    "http://[::1]:3000/cb",
    "http://localhost:3000\\@evil.com",
    "https:///evil.com",
    "javascript:alert(1)",
    "ftp://localhost/cb",
    "data:text/html,hi",
    "not a url",
  ])("rejects the callback %s", async (url) => {
    const res = await gw.call("POST", "/auth/keys/code", { body: { callback_url: url } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/callback_url/);
  });

  it("is for management keys only", async () => {
    const created = await gw.call("POST", "/keys", { body: { name: "inference" } });
    const res = await gw.call("POST", "/auth/keys/code", { key: String(created.body.key), body: { callback_url } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: { code: 403, message: "Only management keys can perform this operation" } });
    expect((await gw.call("POST", "/auth/keys/code", { key: null, body: { callback_url } })).status).toBe(401);
  });

  it("cannot be reached without a key through another spelling of its path", async () => {
    // The router matches prefixes exactly, express routes ignore case: /auth/keys/CODE is public to one, not the other.
    for (const path of ["/auth/keys/CODE", "/auth/keys/Code/", "/auth/keys/%63ode", "/auth/keys/code/"]) {
      const res = await gw.call("POST", path, { key: null, body: { callback_url } });
      expect([401, 404], `${path}: ${JSON.stringify(res.body)}`).toContain(res.status);
    }
  });

  it.each([
    ["a minute-precision expires_at", { expires_at: "2099-12-31T23:59Z" }, /expires_at/],
    ["an expires_at in the past", { expires_at: "2020-01-01T00:00:00Z" }, /expires_at/],
    ["an expires_at of February 30th", { expires_at: "2030-02-30T00:00:00Z" }, /expires_at/],
    ["an expires_at of April 31st", { expires_at: "2030-04-31T00:00:00Z" }, /expires_at/],
    ["an expires_at of February 29th in a common year", { expires_at: "2029-02-29T00:00:00Z" }, /expires_at/],
    ["an expires_at that rounds to the year 10000", { expires_at: "9999-12-31T23:59:59.9999999Z" }, /expires_at/],
    ["a limit below a picodollar", { limit: 4e-13 }, /limit/],
    ["a limit with 13 decimal places", { limit: 1.0000000000001 }, /limit/],
    ["a key_label over 100 characters", { key_label: "x".repeat(101) }, /key_label/],
    ["a method without a challenge", { code_challenge_method: "S256" }, /code_challenge_method/],
    ["an S256 challenge of 44 characters", { code_challenge: `${s256(verifier)}A`, code_challenge_method: "S256" }, /code_challenge/],
    ["an S256 challenge of 128 characters", { code_challenge: "A".repeat(128), code_challenge_method: "S256" }, /code_challenge/],
    ["an S256 challenge with a character outside base64url", { code_challenge: `${s256(verifier).slice(0, 42)}~`, code_challenge_method: "S256" }, /code_challenge/],
    ["an unknown field", { scope: "all" }, /scope/],
  ])("rejects %s with 400", async (_name, patch, message) => {
    const res = await gw.call("POST", "/auth/keys/code", { body: { callback_url, ...patch } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(message);
  });

  it("takes a plain challenge of 128 characters, which only the S256 length rule would refuse", async () => {
    const long = "A".repeat(128);
    const code = await createCode({ code_challenge: long, code_challenge_method: "plain" });
    expect((await exchange({ code, code_verifier: long })).status).toBe(200);
  });

  it("takes the last instant before the year 10000 and a leap day, and mints keys that expire then", async () => {
    for (const expires_at of ["9999-12-31T23:59:59.999Z", "2028-02-29T12:00:00Z"]) {
      const key = String((await exchange({ code: await createCode({ expires_at }) })).body.key);
      expect((await gw.call("GET", "/key", { key })).body.data?.expires_at).toBe(expires_at.replace(/(:\d\d)Z$/, "$1.000Z"));
    }
  });

  it("names the key after the app's title header when no key_label is given", async () => {
    const named = async (headers: Record<string, string>, body: Record<string, unknown> = {}) => {
      const res = await gw.call("POST", "/auth/keys/code", { body: { callback_url, ...body }, headers });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const key = String((await exchange({ code: String(res.body.data?.id) })).body.key);
      const hash = String((await gw.call("GET", "/key", { key })).body.data?.hash);
      return (await gw.call("GET", `/keys/${hash}`)).body.data?.name;
    };
    expect(await named({ "X-OpenRouter-Title": "Acme CLI" })).toBe("Acme CLI");
    expect(await named({ "X-Title": "Legacy CLI" })).toBe("Legacy CLI");
    expect(await named({ "X-Title": "Acme CLI" }, { key_label: "Chosen" })).toBe("Chosen");
    expect(await named({ "X-Title": `  ${"t".repeat(120)}  ` })).toBe("t".repeat(100));
    expect(await named({ "X-Title": "   " })).toBe("PKCE key");
    expect(await named({})).toBe("PKCE key");
  });

  it("puts the key in a workspace of the caller's organization, never another's", async () => {
    const other = await gw.standalone.identity.createOrganization("Elsewhere");
    const foreign = await gw.call("POST", "/auth/keys/code", { body: { callback_url, workspace_id: other.workspaceId } });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error?.message).toMatch(/workspace_id/);

    const workspace = await gw.call("POST", "/workspaces", { body: { name: "PKCE", slug: "pkce" } });
    const workspaceId = String(workspace.body.data?.id);
    const code = await createCode({ workspace_id: workspaceId });
    const key = String((await exchange({ code })).body.key);
    expect((await gw.call("GET", "/key", { key })).body.data?.workspace_id).toBe(workspaceId);
  });
});
