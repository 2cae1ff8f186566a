import { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";
import { spendCatalog } from "./support/spend-fixture.js";
import { gatewayDriver, spendHelpers } from "./support/spend-scenarios.js";
import { startTestIssuer, type TestIssuer } from "./support/test-issuer.js";

/** Workload-identity token exchange through the router, against a real issuer on 127.0.0.1. */
let gw: TestGateway;
let alpha: FakeProvider;
let issuer: TestIssuer;
let h: ReturnType<typeof spendHelpers>;
let target: { key: string; hash: string };
let policyId: string;

const grantType = "urn:ietf:params:oauth:grant-type:token-exchange";
const jwtType = "urn:ietf:params:oauth:token-type:jwt";
const sub = "repo:acme/app:ref:refs/heads/main";
/** Identity keeps its signing key sealed with it; with DATABASE_URL none is made up. */
const encryptionKey = "federation-test-encryption-secret-0123456789";

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  issuer = await startTestIssuer({ alg: "ES256" });
  gw = await startTestGateway({ ...(await catalogEnv(spendCatalog(alpha.baseUrl))), FEDERATION_ALLOW_INSECURE_ISSUERS: "true", SWITCHYARD_ENCRYPTION_KEY: encryptionKey, FEDERATION_EXCHANGES_PER_MINUTE: "1000", FEDERATION_KEYS_REFRESH_MS: "1000" });
  h = spendHelpers(gatewayDriver(gw, alpha));
  target = await h.newKey({ name: "ci" });
  policyId = await createPolicy({ claim_conditions: [{ claim: "sub", matches: "repo:acme/app:ref:refs/heads/*" }] });
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
  await issuer?.stop();
});

async function createPolicy(overrides: Record<string, unknown> = {}, as = bootstrapKey): Promise<string> {
  const body = { name: "deploys", issuer: issuer.issuer, audiences: ["switchyard"], target_key_hash: target.hash, claim_conditions: [{ claim: "sub", equals: sub }], ...overrides };
  const res = await gw.call("POST", "/federation-policies", { body, key: as });
  expect(res.status).toBe(201);
  return String(res.body.data?.id);
}

/** `POST /oauth/token` as a form, the way workloads send it. */
async function exchange(fields: Record<string, string>) {
  const res = await fetch(`${gw.apiUrl}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, cacheControl: res.headers.get("cache-control"), body: (await res.json()) as Record<string, unknown> };
}
const exchangeToken = (subjectToken: string, policy = policyId) =>
  exchange({ grant_type: grantType, subject_token: subjectToken, subject_token_type: jwtType, federation_policy_id: policy });
const notAccepted = { error: "invalid_grant", error_description: "The subject token was not accepted" };

describe("federation policies", () => {
  it("are managed by management keys, require a sub condition, and target only inference keys", async () => {
    const listed = await gw.call("GET", "/federation-policies");
    expect(listed.body.total_count).toBeGreaterThanOrEqual(1);
    expect((await gw.call("GET", `/federation-policies/${policyId}`)).body.data).toMatchObject({ issuer: issuer.issuer, replay_protection: true });
    const base = { name: "x", issuer: issuer.issuer, audiences: ["switchyard"], target_key_hash: target.hash };
    const noSub = await gw.call("POST", "/federation-policies", { body: { ...base, claim_conditions: [{ claim: "repository", equals: "acme/app" }] } });
    expect(noSub.status).toBe(400);
    expect(noSub.body.error?.message).toContain("sub");
    const management = (await gw.call("GET", "/key")).body.data!;
    const toManagement = await gw.call("POST", "/federation-policies", { body: { ...base, claim_conditions: [{ claim: "sub", equals: sub }], target_key_hash: management.hash } });
    expect(toManagement.status).toBe(400);
    expect(toManagement.body.error?.message).toContain("management key cannot be a target");
    expect((await gw.call("GET", "/federation-policies", { key: target.key })).status).toBe(403);
    const id = await createPolicy({ name: "temporary" });
    expect((await gw.call("PATCH", `/federation-policies/${id}`, { body: { disabled: true } })).body.data).toMatchObject({ disabled: true });
    expect(await exchangeToken(await issuer.sign({ jti: crypto.randomUUID() }), id)).toMatchObject({ status: 400, body: notAccepted });
    expect((await gw.call("DELETE", `/federation-policies/${id}`)).status).toBe(200);
    expect((await gw.call("GET", `/federation-policies/${id}`)).status).toBe(404);
  });
});

describe("POST /oauth/token", () => {
  it("exchanges short and long subject tokens through the SDK for an access token that acts as the target key", async () => {
    const sdk = new OpenRouter({ serverURL: gw.apiUrl });
    for (const padding of ["", "x".repeat(10_500)]) {
      const subjectToken = await issuer.sign({ jti: crypto.randomUUID(), padding });
      const answer = await sdk.oAuth.createOauthToken({
        tokenExchangeRequest: { grantType, subjectToken, subjectTokenType: jwtType, federationPolicyId: policyId, scope: "inference" },
      });
      expect(answer.expiresIn).toBeGreaterThan(0);
      expect(answer.expiresIn).toBeLessThanOrEqual(300); // the subject token lives five minutes
      expect(answer).toMatchObject({ tokenType: "Bearer", scope: "inference" });
    }
    const res = await exchangeToken(await issuer.sign({ jti: crypto.randomUUID(), exp: Math.floor(Date.now() / 1000) + 7200 }));
    expect(res.status).toBe(200);
    expect(res.cacheControl).toBe("no-store");
    expect(res.body.expires_in).toBe(900);
    const accessToken = String(res.body.access_token);

    const chat = await h.chat(accessToken, "spend/cent");
    expect(chat.status).toBe(200);
    await h.usageReaches(target.hash, 0.01);
    const me = (await gw.call("GET", "/key", { key: accessToken })).body.data!;
    expect(me).toMatchObject({ hash: target.hash, is_management_key: false });
    const patch = await gw.call("PATCH", `/keys/${target.hash}`, { key: accessToken, body: { name: "mine now" } });
    expect(patch.status).toBe(403);

    expect((await gw.call("PATCH", `/keys/${target.hash}`, { body: { disabled: true } })).status).toBe(200);
    const refused = await h.chat(accessToken, "spend/cent");
    expect(refused.status).toBe(401);
    expect(refused.body.error?.message).toBe("API key is disabled");
    expect(await exchangeToken(await issuer.sign({ jti: crypto.randomUUID() }))).toMatchObject({ status: 400, body: notAccepted });
    expect((await gw.call("PATCH", `/keys/${target.hash}`, { body: { disabled: false } })).status).toBe(200);
  });

  it("stops the tokens of a policy within seconds of it being disabled or deleted", async () => {
    const id = await createPolicy({ name: "revocable" });
    const token = async () => String((await exchangeToken(await issuer.sign({ jti: crypto.randomUUID() }), id)).body.access_token);
    const accessToken = await token();
    expect((await h.chat(accessToken, "spend/cent")).status).toBe(200);
    expect((await gw.call("PATCH", `/federation-policies/${id}`, { body: { disabled: true } })).status).toBe(200);
    await eventually(async () => (await h.chat(accessToken, "spend/cent")).status === 401, 7000);
    expect((await h.chat(accessToken, "spend/cent")).body.error?.message).toBe("The federation policy of this access token is disabled or deleted");
    expect((await gw.call("PATCH", `/federation-policies/${id}`, { body: { disabled: false } })).status).toBe(200);
    await eventually(async () => (await h.chat(accessToken, "spend/cent")).status === 200, 7000);
    const another = await token();
    expect((await gw.call("DELETE", `/federation-policies/${id}`)).status).toBe(200);
    await eventually(async () => (await h.chat(another, "spend/cent")).status === 401, 7000);
  });

  it("gives one answer to every token it does not accept", async () => {
    const now = Math.floor(Date.now() / 1000);
    const [header, payload] = (await issuer.sign({ jti: crypto.randomUUID() })).split(".");
    const unsigned = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`;
    const hmac = await (async () => {
      const { SignJWT } = await import("jose");
      const secret = new TextEncoder().encode(await issuer.publicKeyPem());
      return new SignJWT({ sub, aud: "switchyard", iss: issuer.issuer, jti: crypto.randomUUID() }).setProtectedHeader({ alg: "HS256", kid: issuer.kid }).setIssuedAt().setExpirationTime("5m").sign(secret);
    })();
    const other = await startTestIssuer({ alg: "ES256" });
    const rejected = [
      unsigned,
      hmac,
      `${header}.${payload}.AAAA`,
      await issuer.sign({ jti: crypto.randomUUID(), iat: now - 600, exp: now - 300 }),
      await issuer.sign({ jti: crypto.randomUUID(), nbf: now + 600 }),
      await issuer.sign({ jti: crypto.randomUUID(), aud: "someone-else" }),
      await issuer.sign({ jti: crypto.randomUUID(), sub: "repo:evil/app:ref:refs/heads/main" }),
      await other.sign({ jti: crypto.randomUUID(), iss: issuer.issuer }),
      await other.sign({ jti: crypto.randomUUID() }),
    ];
    await other.stop();
    for (const token of rejected) expect(await exchangeToken(token)).toMatchObject({ status: 400, body: notAccepted });
    expect(await exchangeToken(await issuer.sign({ jti: crypto.randomUUID() }), crypto.randomUUID())).toMatchObject({ status: 400, body: notAccepted });
  });

  it("keeps one organization's tokens out of another's policy", async () => {
    const second = await gw.standalone.identity.createOrganization("second");
    const theirKey = await gw.call("POST", "/keys", { key: second.managementKey, body: { name: "theirs" } });
    const theirPolicy = await gw.call("POST", "/federation-policies", {
      key: second.managementKey,
      body: { name: "theirs", issuer: issuer.issuer, audiences: ["switchyard"], target_key_hash: theirKey.body.data?.hash, claim_conditions: [{ claim: "sub", equals: "repo:other-org/app:ref:refs/heads/main" }] },
    });
    expect(theirPolicy.status).toBe(201);
    expect((await gw.call("GET", `/federation-policies/${String(theirPolicy.body.data?.id)}`)).status).toBe(404);
    expect(await exchangeToken(await issuer.sign({ jti: crypto.randomUUID() }), String(theirPolicy.body.data?.id))).toMatchObject({ status: 400, body: notAccepted });
    const cross = await gw.call("POST", "/federation-policies", {
      body: { name: "cross", issuer: issuer.issuer, audiences: ["switchyard"], target_key_hash: theirKey.body.data?.hash, claim_conditions: [{ claim: "sub", equals: sub }] },
    });
    expect(cross.status).toBe(400);
  });

  it("exchanges a subject token once with replay protection, as often as it likes without", async () => {
    const once = await issuer.sign({ jti: crypto.randomUUID() });
    expect((await exchangeToken(once)).status).toBe(200);
    expect(await exchangeToken(once)).toMatchObject({ status: 400, body: notAccepted });
    expect(await exchangeToken(await issuer.sign({}))).toMatchObject({ status: 400, body: notAccepted }); // no jti
    const lenient = await createPolicy({ replay_protection: false });
    const again = await issuer.sign({});
    expect((await exchangeToken(again, lenient)).status).toBe(200);
    expect((await exchangeToken(again, lenient)).status).toBe(200);
  });

  it("remembers the jti of a token that expires past what a timestamp holds", async () => {
    for (const exp of [1e20, 2 ** 53]) {
      const token = await issuer.sign({ jti: crypto.randomUUID(), exp });
      const first = await exchangeToken(token);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.expires_in).toBe(900);
      expect(await exchangeToken(token)).toMatchObject({ status: 400, body: notAccepted });
    }
  });

  it("does not accept a jti with control characters", async () => {
    for (const jti of ["a\u0000b", "\u0000", "line\nbreak"]) {
      expect(await exchangeToken(await issuer.sign({ jti }))).toMatchObject({ status: 400, body: notAccepted });
    }
  });

  it("picks up a rotated issuer key, and does not fetch keys for every unknown kid", async () => {
    const before = issuer.fetches.jwks;
    const started = Date.now();
    for (let i = 0; i < 20; i++) {
      expect(await exchangeToken(await issuer.sign({ jti: crypto.randomUUID() }, { header: { kid: `unknown-${i}` } }))).toMatchObject({ status: 400 });
    }
    // At most one fetch per refresh interval (FEDERATION_KEYS_REFRESH_MS, 1 s here) however slow the machine, not one per token.
    expect(issuer.fetches.jwks - before).toBeLessThanOrEqual(1 + Math.floor((Date.now() - started) / 1000));
    const rotated = await startTestIssuer({ alg: "ES256" });
    const policy = await createPolicy({ issuer: rotated.issuer });
    expect((await exchangeToken(await rotated.sign({ jti: crypto.randomUUID() }), policy)).status).toBe(200);
    const old = rotated.kid;
    await rotated.addKey("ES256");
    rotated.retireKey(old);
    // The new kid is unknown to the cache: one refetch finds it, once the refresh interval has passed.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await exchangeToken(await rotated.sign({ jti: crypto.randomUUID() }), policy)).status).toBe(200);
    await rotated.stop();
  });

  it("answers 503 when the issuer cannot be reached", async () => {
    const down = await startTestIssuer({ alg: "ES256" });
    const policy = await createPolicy({ issuer: down.issuer });
    const token = await down.sign({ jti: crypto.randomUUID() });
    down.down = "503";
    expect(await exchangeToken(token, policy)).toMatchObject({ status: 503, body: { error: "temporarily_unavailable" } });
    await down.stop();
  });

  it("names the field of a malformed request in RFC 6749 terms", async () => {
    const token = await issuer.sign({ jti: crypto.randomUUID() });
    const valid = { grant_type: grantType, subject_token: token, subject_token_type: jwtType, federation_policy_id: policyId };
    expect((await exchange({ ...valid, grant_type: "client_credentials" })).body.error).toBe("unsupported_grant_type");
    expect((await exchange({ ...valid, scope: "admin" })).body.error).toBe("invalid_scope");
    expect((await exchange({ ...valid, subject_token: "x".repeat(16_385) })).body.error).toBe("invalid_request");
    expect((await exchange({ ...valid, subject_token: "" })).body.error).toBe("invalid_request");
    expect((await exchange({ ...valid, federation_policy_id: "not-a-uuid" })).body.error).toBe("invalid_request");
    expect((await exchange({ ...valid, subject_token_type: "urn:ietf:params:oauth:token-type:id_token" })).body.error).toBe("invalid_request");
    const json = await fetch(`${gw.apiUrl}/oauth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(valid) });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: "invalid_request" });
    expect(await exchangeToken("not.a.jwt")).toMatchObject({ status: 400, body: notAccepted });
  });

  it("publishes the keys that verify its access tokens", async () => {
    const res = await fetch(`${gw.apiUrl}/oauth/jwks`);
    const set = (await res.json()) as { keys: Array<Record<string, unknown>> };
    expect(set.keys.length).toBeGreaterThan(0);
    expect(set.keys[0]).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    expect(set.keys[0]).not.toHaveProperty("d");
  });
});

describe("rate limits of the token exchange", () => {
  it("answers 429 past the per-policy limit, counting only the exchanges the policy accepts", async () => {
    const limited = await startTestGateway({ ...(await catalogEnv(spendCatalog(alpha.baseUrl))), FEDERATION_ALLOW_INSECURE_ISSUERS: "true", SWITCHYARD_ENCRYPTION_KEY: encryptionKey, FEDERATION_EXCHANGES_PER_MINUTE: "3" });
    try {
      const key = await limited.call("POST", "/keys", { body: { name: "t" } });
      const policy = await limited.call("POST", "/federation-policies", {
        body: { name: "p", issuer: issuer.issuer, audiences: ["switchyard"], target_key_hash: key.body.data?.hash, claim_conditions: [{ claim: "sub", equals: sub }] },
      });
      const send = async (subjectToken: string) => {
        const res = await fetch(`${limited.apiUrl}/oauth/token`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ grant_type: grantType, subject_token: subjectToken, subject_token_type: jwtType, federation_policy_id: String(policy.body.data?.id) }),
        });
        return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as Record<string, unknown> };
      };
      const valid = () => issuer.sign({ jti: crypto.randomUUID() });
      // Whoever knows the policy id (it sits in public CI files) sends junk, and tokens of the same issuer that the policy refuses.
      const fetchesBefore = issuer.fetches.jwks;
      const refused = [
        "eyJhbGciOiJub25lIn0.eyJ4IjoxfQ.",
        "eyJhbGciOiJub25lIn0.eyJ4IjoxfQ.",
        await issuer.sign({ jti: crypto.randomUUID(), sub: "repo:evil/app:ref:refs/heads/main" }),
        ...(await Promise.all(Array.from({ length: 5 }, (_, i) => issuer.sign({ jti: crypto.randomUUID() }, { header: { kid: `unknown-${i}` } })))),
      ];
      for (const token of refused) expect(await send(token)).toMatchObject({ status: 400, body: notAccepted });
      // Refusals do not reach the issuer once per attempt: its key set is fetched at most once per refresh interval.
      expect(issuer.fetches.jwks - fetchesBefore).toBeLessThanOrEqual(1);
      const statuses = [(await send(await valid())).status, (await send(await valid())).status, (await send(await valid())).status];
      expect(statuses).toEqual([200, 200, 200]);
      const over = await send(await valid());
      expect(over).toMatchObject({ status: 429, body: { error: "temporarily_unavailable" } });
      expect(Number(over.retryAfter)).toBeGreaterThan(0);
      expect(await send("eyJhbGciOiJub25lIn0.eyJ4IjoxfQ.")).toMatchObject({ status: 400, body: notAccepted });
    } finally {
      await limited.stop();
    }
  });
});
