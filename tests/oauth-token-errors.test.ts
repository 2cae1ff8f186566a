import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startTestIssuer, type TestIssuer } from "./support/test-issuer.js";

/** Every answer of `POST /oauth/token` that is not a token, through the router: RFC 6749 §5.2's shape, never cached. */
let gw: TestGateway;
let issuer: TestIssuer;
let targetHash: string;

const grantType = "urn:ietf:params:oauth:grant-type:token-exchange";
const jwtType = "urn:ietf:params:oauth:token-type:jwt";
const sub = "repo:acme/app:ref:refs/heads/main";
const oauthCodes = ["invalid_request", "invalid_grant", "unsupported_grant_type", "invalid_scope", "server_error", "temporarily_unavailable"];
/** The router refuses bodies past this; identity's form parser past 64 KiB (reached by a chunked body). */
const maxBodyBytes = 32_768;
const routerRatePerMinute = 60;

beforeAll(async () => {
  issuer = await startTestIssuer({ alg: "ES256" });
  gw = await startTestGateway({
    FEDERATION_ALLOW_INSECURE_ISSUERS: "true",
    FEDERATION_EXCHANGES_PER_MINUTE: "3",
    FEDERATION_KEYS_REFRESH_MS: "30000",
    MAX_BODY_BYTES: String(maxBodyBytes),
    RATE_LIMIT_PER_MINUTE: String(routerRatePerMinute),
    SWITCHYARD_ENCRYPTION_KEY: "oauth-errors-test-encryption-secret-0123456789",
  });
  targetHash = String((await gw.call("POST", "/keys", { body: { name: "ci" } })).body.data?.hash);
});
afterAll(async () => {
  await gw?.stop();
  await issuer?.stop();
});

async function createPolicy(issuerUrl = issuer.issuer): Promise<string> {
  const body = { name: "deploys", issuer: issuerUrl, audiences: ["switchyard"], target_key_hash: targetHash, claim_conditions: [{ claim: "sub", equals: sub }] };
  const res = await gw.call("POST", "/federation-policies", { body });
  expect(res.status).toBe(201);
  return String(res.body.data?.id);
}

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** A request to the token endpoint as raw as a client may send it; `chunked` sends no Content-Length. */
function send(options: { method?: string; headers?: Record<string, string>; body?: string; chunked?: boolean }): Promise<RawAnswer> {
  const url = new URL(`${gw.apiUrl}/oauth/token`);
  const body = Buffer.from(options.body ?? "");
  const headers = { ...(options.chunked ? {} : { "content-length": String(body.length) }), ...options.headers };
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      });
    });
    req.on("error", reject);
    if (options.chunked) {
      // Several writes without a length: the router cannot know the size up front.
      for (let offset = 0; offset < body.length; offset += 8192) req.write(body.subarray(offset, offset + 8192));
      req.end();
    } else req.end(body);
  });
}

const form = (fields: Record<string, string> | Array<[string, string]>) => ({
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
});

async function validFields(policyId: string): Promise<Record<string, string>> {
  return { grant_type: grantType, subject_token: await issuer.sign({ jti: crypto.randomUUID() }), subject_token_type: jwtType, federation_policy_id: policyId };
}

/** RFC 6749 §5.2: exactly `error` and `error_description`, with a registered code; §5.1: `no-store`. */
function expectOAuthError(answer: RawAnswer, status: number, error?: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(Object.keys(answer.body).sort()).toEqual(["error", "error_description"]);
  expect(oauthCodes).toContain(answer.body.error);
  if (error) expect(answer.body.error).toBe(error);
  expect(typeof answer.body.error_description).toBe("string");
  expect(answer.headers["cache-control"]).toBe("no-store");
}

describe("POST /oauth/token errors", () => {
  it("ignores form parameters it does not know, however many (RFC 6749 §3.2)", async () => {
    const policy = await createPolicy();
    const unknown = Array.from({ length: 40 }, (_, i): [string, string] => [`x_extension_${i}`, "value"]);
    const fields: Array<[string, string]> = [...Object.entries(await validFields(policy)), ["client_id", "ci"], ["resource", "https://a.example"], ["resource", "https://b.example"], ...unknown];
    const answer = await send(form(fields));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ token_type: "Bearer", scope: "inference" });
  });

  it("answers every malformed request 400 (415 for a charset it cannot read) in OAuth's shape", async () => {
    const valid = await validFields(await createPolicy());
    const json = { "content-type": "application/json" };
    expectOAuthError(await send({ headers: json, body: JSON.stringify(valid) }), 400, "invalid_request");
    expectOAuthError(await send({ headers: json, body: "{not json" }), 400, "invalid_request");
    expectOAuthError(await send({ headers: { "content-type": "application/x-www-form-urlencoded" } }), 400, "invalid_request");
    // A known parameter twice is malformed (RFC 6749 §3.2), unlike an unknown one.
    expectOAuthError(await send(form([...Object.entries(valid), ["grant_type", grantType]])), 400, "invalid_request");
    expectOAuthError(await send(form({ ...valid, grant_type: "client_credentials" })), 400, "unsupported_grant_type");
    expectOAuthError(await send({ headers: { "content-type": "application/x-www-form-urlencoded; charset=koi8-r" }, body: "a=b" }), 415, "invalid_request");
    expectOAuthError(await send(form({ ...valid, subject_token: "not.a.jwt" })), 400, "invalid_grant");
  });

  it("ignores a credential sent with the exchange instead of answering 401", async () => {
    const policy = await createPolicy();
    for (const authorization of ["Bearer sk-sy-v1-not-a-key", `Basic ${Buffer.from("client:secret").toString("base64")}`]) {
      const { headers, body } = form(await validFields(policy));
      const answer = await send({ headers: { ...headers, authorization }, body });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
  });

  it("answers 413 in OAuth's shape, from the router and from identity", async () => {
    const valid = await validFields(await createPolicy());
    const padded = (bytes: number) => form({ ...valid, padding: "x".repeat(bytes) });
    // Content-Length past MAX_BODY_BYTES: the router refuses before identity sees it.
    expectOAuthError(await send(padded(maxBodyBytes + 1000)), 413, "invalid_request");
    // No Content-Length: identity's form parser stops at 64 KiB.
    expectOAuthError(await send({ ...padded(100_000), chunked: true }), 413, "invalid_request");
  });

  it("answers other methods 405 in OAuth's shape", async () => {
    const answer = await send({ method: "GET" });
    expectOAuthError(answer, 405, "invalid_request");
    expect(answer.headers.allow).toBe("POST");
  });

  it("answers 503 with Retry-After while the issuer's keys cannot be fetched", async () => {
    const down = await startTestIssuer({ alg: "ES256" });
    try {
      for (const outage of ["503", "reset"] as const) {
        // A policy each: the per-policy limit (3 a minute here) counts refusals too.
        const policy = await createPolicy(down.issuer);
        down.down = outage;
        const fields = { grant_type: grantType, subject_token: await down.sign({ jti: crypto.randomUUID() }), subject_token_type: jwtType, federation_policy_id: policy };
        // The first answer follows a failed fetch; the second comes while the next fetch waits its turn.
        for (const answer of [await send(form(fields)), await send(form(fields))]) {
          expectOAuthError(answer, 503, "temporarily_unavailable");
          const retryAfter = Number(answer.headers["retry-after"]);
          expect(Number.isInteger(retryAfter)).toBe(true);
          expect(retryAfter).toBeGreaterThanOrEqual(1);
          expect(retryAfter).toBeLessThanOrEqual(30);
        }
      }
    } finally {
      await down.stop();
    }
  });

  it("answers 429 with Retry-After past the per-policy limit", async () => {
    const policy = await createPolicy();
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await send(form(await validFields(policy))));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expectOAuthError(answers[3]!, 429, "temporarily_unavailable");
    expect(Number(answers[3]!.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  });

  // Last: it spends the per-address allowance every public route shares.
  it("answers the router's per-address 429 in OAuth's shape with Retry-After", async () => {
    let answer: RawAnswer | undefined;
    for (let i = 0; i < routerRatePerMinute * 3 && answer?.status !== 429; i++) answer = await send(form({ grant_type: "client_credentials" }));
    expectOAuthError(answer!, 429, "temporarily_unavailable");
    expect(Number(answer!.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  });
});
