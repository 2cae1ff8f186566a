import { decodeProtectedHeader } from "jose";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startTestIssuer, type TestIssuer } from "./support/test-issuer.js";

/** The router stops accepting access tokens whose signing key identity no longer publishes. */
describe.skipIf(!testEnv.databaseUrl)("access-token signing keys at the router", () => {
  let gw: TestGateway;
  let issuer: TestIssuer;
  const sub = "repo:acme/app:ref:refs/heads/main";

  beforeAll(async () => {
    issuer = await startTestIssuer({ alg: "ES256" });
    gw = await startTestGateway({ FEDERATION_ALLOW_INSECURE_ISSUERS: "true", SWITCHYARD_ENCRYPTION_KEY: "signing-keys-test-encryption-secret-0123456789" });
  });
  afterAll(async () => {
    await gw?.stop();
    await issuer?.stop();
  });

  it("refuses a token within seconds of its signing key being deleted, and signs the next with a new key", async () => {
    const target = await gw.call("POST", "/keys", { body: { name: "ci" } });
    const policy = await gw.call("POST", "/federation-policies", {
      body: { name: "p", issuer: issuer.issuer, audiences: ["switchyard"], target_key_hash: target.body.data?.hash, claim_conditions: [{ claim: "sub", equals: sub }] },
    });
    const exchange = async () => {
      const res = await fetch(`${gw.apiUrl}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: await issuer.sign({ jti: crypto.randomUUID() }),
          subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
          federation_policy_id: String(policy.body.data?.id),
        }),
      });
      expect(res.status).toBe(200);
      return String(((await res.json()) as { access_token: string }).access_token);
    };
    const accessToken = await exchange();
    expect((await gw.call("GET", "/key", { key: accessToken })).status).toBe(200);

    // What an operator does after a compromise: the key goes, and identity stops publishing it.
    const client = new pg.Client({ connectionString: gw.databaseUrl });
    await client.connect();
    try {
      await client.query(`DELETE FROM identity.signing_keys WHERE kid = $1`, [decodeProtectedHeader(accessToken).kid]);
    } finally {
      await client.end();
    }
    const published = (await (await fetch(`${gw.apiUrl}/oauth/jwks`)).json()) as { keys: Array<{ kid: string }> };
    expect(published.keys.map((k) => k.kid)).not.toContain(decodeProtectedHeader(accessToken).kid);
    await eventually(async () => (await gw.call("GET", "/key", { key: accessToken })).status === 401, 10_000);
    expect((await gw.call("GET", "/key", { key: accessToken })).body.error?.message).toBe("Invalid or expired access token");

    // The next exchange, at once, is signed by a new key, which the router fetches (at most once a second).
    const next = await exchange();
    expect(decodeProtectedHeader(next).kid).not.toBe(decodeProtectedHeader(accessToken).kid);
    await eventually(async () => (await gw.call("GET", "/key", { key: next })).status === 200, 3000);
  });
});
