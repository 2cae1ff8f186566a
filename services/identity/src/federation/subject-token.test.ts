import { randomUUID } from "node:crypto";
import { base64url, SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { startTestIssuer, type TestIssuer } from "../../../../tests/support/test-issuer.js";
import { createSubjectTokenVerifier, IssuerUnavailable, SubjectTokenRejected, type SubjectTokenPolicy, type SubjectTokenVerifierOptions } from "./subject-token.js";

const minute = 60_000;
let started: TestIssuer[] = [];
let offset = 0;
const now = () => Date.now() + offset;
const seconds = () => Math.floor(now() / 1000);

async function issuerFor(options: { path?: string; alg?: string } = {}) {
  const issuer = await startTestIssuer({ ...options, now });
  started.push(issuer);
  return issuer;
}

function verifierFor(options: Partial<SubjectTokenVerifierOptions> = {}) {
  return createSubjectTokenVerifier({ allowInsecureIssuers: true, now, ...options });
}

const policyFor = (issuer: TestIssuer, more: Partial<SubjectTokenPolicy> = {}): SubjectTokenPolicy => ({
  issuer: issuer.issuer,
  audiences: ["switchyard"],
  maxTokenLifetimeSeconds: null,
  ...more,
});

afterEach(async () => {
  await Promise.all(started.map((issuer) => issuer.stop()));
  started = [];
  offset = 0;
});

describe("subject token verification: accepted tokens", () => {
  it("accepts a short token and returns its claims", async () => {
    const issuer = await issuerFor();
    const token = await issuer.sign({ sub: "system:serviceaccount:prod:runner" });
    const payload = await verifierFor().verify(token, policyFor(issuer));
    expect(payload.sub).toBe("system:serviceaccount:prod:runner");
    expect(issuer.fetches).toEqual({ discovery: 1, jwks: 1 });
  });

  it("accepts a token near 16 KiB with big claims", async () => {
    const issuer = await issuerFor();
    const groups = Array.from({ length: 300 }, (_, i) => `team-${i}-${"x".repeat(24)}`);
    const token = await issuer.sign({ groups, job_workflow_ref: "acme/app/.github/workflows/deploy.yml@refs/heads/main" });
    expect(token.length).toBeGreaterThan(14 * 1024);
    expect(token.length).toBeLessThan(16 * 1024);
    const payload = await verifierFor().verify(token, policyFor(issuer));
    expect(payload.groups).toEqual(groups);
  });

  it.each(["RS384", "PS256", "PS512", "ES256", "ES384", "ES512", "EdDSA"])("accepts %s", async (alg) => {
    const issuer = await issuerFor({ alg });
    await expect(verifierFor().verify(await issuer.sign(), policyFor(issuer))).resolves.toMatchObject({ aud: "switchyard" });
  });

  it("accepts any one of the policy audiences, within an audience array", async () => {
    const issuer = await issuerFor();
    const token = await issuer.sign({ aud: ["sts.example", "switchyard-prod"] });
    await expect(verifierFor().verify(token, policyFor(issuer, { audiences: ["switchyard-dev", "switchyard-prod"] }))).resolves.toBeTruthy();
  });

  it("fetches discovery for an issuer ending in a slash without a double slash", async () => {
    const issuer = await issuerFor({ path: "/tenants/acme/" });
    await verifierFor().verify(await issuer.sign(), policyFor(issuer));
    expect(issuer.fetches).toEqual({ discovery: 1, jwks: 1 });
  });

  it("shares one fetch among concurrent first verifications and caches afterwards", async () => {
    const issuer = await issuerFor();
    const verifier = verifierFor();
    const tokens = await Promise.all(Array.from({ length: 10 }, () => issuer.sign()));
    await Promise.all(tokens.map((t) => verifier.verify(t, policyFor(issuer))));
    await verifier.verify(await issuer.sign(), policyFor(issuer));
    expect(issuer.fetches).toEqual({ discovery: 1, jwks: 1 });
  });

  it("uses the only fitting key for a token without kid, and refuses to guess among several", async () => {
    const issuer = await issuerFor();
    const noKid = await issuer.sign({}, { header: { kid: undefined } });
    await issuer.addKey("ES256"); // cannot verify RS256, so it does not count
    await expect(verifierFor().verify(noKid, policyFor(issuer))).resolves.toBeTruthy();
    await issuer.addKey("RS256");
    await expect(verifierFor().verify(noKid, policyFor(issuer))).rejects.toThrow(/no kid and 2 keys could verify RS256/);
  });
});

describe("subject token verification: rejected tokens", () => {
  async function rejects(issuer: TestIssuer, token: string, policy = policyFor(issuer), pattern?: RegExp) {
    const result = verifierFor().verify(token, policy);
    await expect(result).rejects.toBeInstanceOf(SubjectTokenRejected);
    if (pattern) await expect(result).rejects.toThrow(pattern);
  }

  it("rejects alg none without fetching anything", async () => {
    const issuer = await issuerFor();
    const claims = { iss: issuer.issuer, aud: "switchyard", exp: seconds() + 300 };
    const encode = (value: object) => base64url.encode(JSON.stringify(value));
    for (const alg of ["none", "None", "NONE"]) await rejects(issuer, `${encode({ alg, kid: issuer.kid })}.${encode(claims)}.`, undefined, /not allowed/);
    expect(issuer.fetches).toEqual({ discovery: 0, jwks: 0 });
  });

  it("rejects HMAC tokens keyed with the issuer's public key without fetching anything", async () => {
    const issuer = await issuerFor();
    const pem = new TextEncoder().encode(await issuer.publicKeyPem());
    for (const alg of ["HS256", "HS384", "HS512"]) {
      const token = await new SignJWT({ iss: issuer.issuer, aud: "switchyard" }).setProtectedHeader({ alg, kid: issuer.kid }).setExpirationTime(seconds() + 300).sign(pem);
      await rejects(issuer, token, undefined, /not allowed/);
    }
    expect(issuer.fetches).toEqual({ discovery: 0, jwks: 0 });
  });

  it("rejects a token whose alg does not fit the named key's type or declared alg", async () => {
    const issuer = await issuerFor();
    const rsaKid = issuer.kid;
    await issuer.addKey("ES256");
    // An EC-signed token claiming the RSA key's kid; a PS256 token from a key published as RS256.
    await rejects(issuer, await issuer.sign({}, { header: { kid: rsaKid } }), undefined, /cannot verify ES256/);
    const other = await issuerFor({ alg: "PS256" });
    const ps = await other.sign({ iss: issuer.issuer }, { header: { kid: rsaKid } });
    await rejects(issuer, ps, undefined, /cannot verify PS256/);
  });

  it("rejects a tampered signature", async () => {
    const issuer = await issuerFor();
    const [header, , signature] = (await issuer.sign()).split(".");
    const forged = base64url.encode(JSON.stringify({ iss: issuer.issuer, aud: "switchyard", sub: "admin", exp: seconds() + 300 }));
    await rejects(issuer, `${header}.${forged}.${signature}`, undefined, /signature/);
  });

  it("rejects malformed tokens", async () => {
    const issuer = await issuerFor();
    for (const token of ["", "abc", "a.b.c", "a.b", `${(await issuer.sign()).slice(0, 40)}`]) await rejects(issuer, token);
  });

  it("rejects an expired token, tolerating a little clock skew", async () => {
    const issuer = await issuerFor();
    await rejects(issuer, await issuer.sign({ iat: seconds() - 600, exp: seconds() - 120 }), undefined, /"exp"/);
    const justExpired = await issuer.sign({ iat: seconds() - 600, exp: seconds() - 10 });
    await expect(verifierFor().verify(justExpired, policyFor(issuer))).resolves.toBeTruthy();
    await expect(verifierFor({ clockToleranceSeconds: 0 }).verify(justExpired, policyFor(issuer))).rejects.toBeInstanceOf(SubjectTokenRejected);
  });

  it("rejects a token that is not valid yet or issued in the future", async () => {
    const issuer = await issuerFor();
    await rejects(issuer, await issuer.sign({ nbf: seconds() + 120 }), undefined, /"nbf"/);
    await rejects(issuer, await issuer.sign({ iat: seconds() + 120, exp: seconds() + 600 }), undefined, /iat is in the future/);
    await expect(verifierFor().verify(await issuer.sign({ nbf: seconds() + 10 }), policyFor(issuer))).resolves.toBeTruthy();
  });

  it("rejects a token without exp", async () => {
    const issuer = await issuerFor();
    await rejects(issuer, await issuer.sign({ exp: undefined }), undefined, /"exp"/);
  });

  it("rejects a wrong iss before fetching anything", async () => {
    const issuer = await issuerFor();
    await rejects(issuer, await issuer.sign({ iss: `${issuer.issuer}/` }), undefined, /is not/);
    await rejects(issuer, await issuer.sign({ iss: "https://token.actions.githubusercontent.com" }));
    expect(issuer.fetches).toEqual({ discovery: 0, jwks: 0 });
  });

  it("rejects a wrong audience, and everything when the policy lists none", async () => {
    const issuer = await issuerFor();
    await rejects(issuer, await issuer.sign({ aud: "someone-else" }), undefined, /"aud"/);
    await rejects(issuer, await issuer.sign({ aud: undefined }), undefined, /"aud"/);
    await rejects(issuer, await issuer.sign(), policyFor(issuer, { audiences: [] }), /no audiences/);
  });

  it("rejects a lifetime over the policy maximum, and a missing iat when there is one", async () => {
    const issuer = await issuerFor();
    const policy = policyFor(issuer, { maxTokenLifetimeSeconds: 600 });
    await rejects(issuer, await issuer.sign({ exp: seconds() + 3600 }), policy, /lifetime 3600 s exceeds 600 s/);
    await rejects(issuer, await issuer.sign({ iat: undefined }), policy, /"iat"/);
    await expect(verifierFor().verify(await issuer.sign({ exp: seconds() + 600 }), policy)).resolves.toBeTruthy();
    await expect(verifierFor().verify(await issuer.sign({ iat: undefined }), policyFor(issuer))).resolves.toBeTruthy();
  });
});

describe("subject token verification: key set caching", () => {
  it("turns an unknown-kid flood into at most one refetch per interval", async () => {
    const issuer = await issuerFor();
    const verifier = verifierFor();
    await verifier.verify(await issuer.sign(), policyFor(issuer));
    const flood = async () => {
      const tokens = await Promise.all(Array.from({ length: 50 }, () => issuer.sign({}, { header: { kid: randomUUID() } })));
      const results = await Promise.allSettled(tokens.map((t) => verifier.verify(t, policyFor(issuer))));
      for (const result of results) expect(result.status === "rejected" && result.reason instanceof SubjectTokenRejected).toBe(true);
    };
    await flood(); // within the interval of the first fetch: no refetch at all
    expect(issuer.fetches.jwks).toBe(1);
    offset += minute + 1000;
    await flood();
    expect(issuer.fetches.jwks).toBe(2);
    for (let i = 0; i < 50; i++) {
      await expect(verifier.verify(await issuer.sign({}, { header: { kid: randomUUID() } }), policyFor(issuer))).rejects.toBeInstanceOf(SubjectTokenRejected);
    }
    expect(issuer.fetches.jwks).toBe(2);
    await expect(verifier.verify(await issuer.sign(), policyFor(issuer))).resolves.toBeTruthy();
  });

  it("picks up a rotated key through the unknown-kid refetch, and drops a retired one", async () => {
    const issuer = await issuerFor();
    const verifier = verifierFor();
    const oldKid = issuer.kid;
    await verifier.verify(await issuer.sign(), policyFor(issuer));
    await issuer.addKey();
    offset += minute + 1000;
    await expect(verifier.verify(await issuer.sign(), policyFor(issuer))).resolves.toBeTruthy();
    expect(issuer.fetches).toEqual({ discovery: 2, jwks: 2 });
    await expect(verifier.verify(await issuer.sign({}, { kid: oldKid }), policyFor(issuer))).resolves.toBeTruthy();
    issuer.retireKey(oldKid);
    offset += 10 * minute + 1000; // past the cache TTL: the next verification refreshes
    await expect(verifier.verify(await issuer.sign(), policyFor(issuer))).resolves.toBeTruthy();
    expect(issuer.fetches.jwks).toBe(3);
    await expect(verifier.verify(await issuer.sign({}, { kid: oldKid }), policyFor(issuer))).rejects.toThrow(/no key/);
  });

  it("keeps using fresh cached keys while the issuer is down", async () => {
    const issuer = await issuerFor();
    const verifier = verifierFor();
    await verifier.verify(await issuer.sign(), policyFor(issuer));
    issuer.down = "503";
    offset += 5 * minute;
    await expect(verifier.verify(await issuer.sign(), policyFor(issuer))).resolves.toBeTruthy();
    expect(issuer.fetches).toEqual({ discovery: 1, jwks: 1 });
  });

  it("keeps using expired cached keys within the stale window while the issuer is down, then gives up", async () => {
    const issuer = await issuerFor();
    const verifier = verifierFor();
    await verifier.verify(await issuer.sign(), policyFor(issuer));
    issuer.down = "reset";
    offset += 10 * minute + 1000;
    await expect(verifier.verify(await issuer.sign(), policyFor(issuer))).resolves.toBeTruthy();
    issuer.down = "503";
    offset += 59 * minute;
    await expect(verifier.verify(await issuer.sign(), policyFor(issuer))).resolves.toBeTruthy();
    offset += 2 * minute;
    await expect(verifier.verify(await issuer.sign(), policyFor(issuer))).rejects.toBeInstanceOf(IssuerUnavailable);
    issuer.down = null;
    offset += minute;
    await expect(verifier.verify(await issuer.sign(), policyFor(issuer))).resolves.toBeTruthy();
  });

  it("is unavailable with nothing cached, retrying only after the interval", async () => {
    const issuer = await issuerFor();
    const verifier = verifierFor();
    issuer.down = "503";
    await expect(verifier.verify(await issuer.sign(), policyFor(issuer))).rejects.toThrow(IssuerUnavailable);
    await expect(verifier.verify(await issuer.sign(), policyFor(issuer))).rejects.toThrow(/retrying after/);
    expect(issuer.fetches.discovery).toBe(1);
    issuer.down = null;
    offset += minute;
    await expect(verifier.verify(await issuer.sign(), policyFor(issuer))).resolves.toBeTruthy();
  });

  it("is unavailable when the issuer is not listening at all", async () => {
    const issuer = await issuerFor();
    const token = await issuer.sign();
    await issuer.stop();
    await expect(verifierFor().verify(token, policyFor(issuer))).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe("subject token verification: issuer documents", () => {
  async function unavailable(issuer: TestIssuer, pattern: RegExp, options: Partial<SubjectTokenVerifierOptions> = {}) {
    const result = verifierFor(options).verify(await issuer.sign(), policyFor(issuer));
    await expect(result).rejects.toBeInstanceOf(IssuerUnavailable);
    await expect(result).rejects.toThrow(pattern);
  }

  it("is unavailable when discovery names another issuer", async () => {
    const issuer = await issuerFor();
    issuer.discovery = { body: JSON.stringify({ issuer: `${issuer.issuer}/`, jwks_uri: issuer.jwksUri }) };
    await unavailable(issuer, /names issuer/);
    expect(issuer.fetches.jwks).toBe(0);
  });

  it("is unavailable for malformed documents", async () => {
    const issuer = await issuerFor();
    issuer.discovery = { body: "<html>hello</html>", headers: { "content-type": "text/html" } };
    await unavailable(issuer, /did not answer with JSON/);
    issuer.discovery = { body: JSON.stringify({ issuer: issuer.issuer }) };
    await unavailable(issuer, /lacks issuer or jwks_uri/);
    issuer.discovery = { status: 404, body: "{}" };
    await unavailable(issuer, /answered 404/);
    issuer.discovery = null;
    issuer.jwks = { body: JSON.stringify({ keys: "none" }) };
    await unavailable(issuer, /no keys array/);
    issuer.jwks = { body: '{"keys": [' };
    await unavailable(issuer, /did not answer with JSON/);
  });

  it("is unavailable for oversize documents", async () => {
    const issuer = await issuerFor();
    const padding = "x".repeat(300 * 1024);
    const keySet = JSON.stringify({ keys: [], padding });
    issuer.jwks = { body: keySet, headers: { "content-length": String(keySet.length) } };
    await unavailable(issuer, new RegExp(`declares ${keySet.length} bytes, over the 262144 byte limit`));
    issuer.jwks = null;
    issuer.discovery = { body: JSON.stringify({ issuer: issuer.issuer, jwks_uri: issuer.jwksUri, padding }) }; // chunked, no length
    await unavailable(issuer, /sent a body over the 262144 byte limit/);
    issuer.discovery = null;
    await unavailable(issuer, /over the 100 byte limit/, { maxResponseBytes: 100 });
  });

  it("ignores symmetric, private and unknown keys in the set while using the good ones", async () => {
    const issuer = await issuerFor();
    const real = (await (await fetch(issuer.jwksUri)).json()) as { keys: object[] };
    const junk = [{ kty: "oct", k: "c2VjcmV0", kid: issuer.kid }, { kty: "RSA", d: "x", n: "y", e: "AQAB", kid: issuer.kid }, { kty: "weird" }, "nope"];
    issuer.jwks = { body: JSON.stringify({ keys: [...junk, ...real.keys] }) };
    await expect(verifierFor().verify(await issuer.sign(), policyFor(issuer))).resolves.toBeTruthy();
  });

  it("refuses http and private addresses unless insecure issuers are allowed, without connecting", async () => {
    const issuer = await issuerFor();
    await unavailable(issuer, /refused by address policy: .*only https/, { allowInsecureIssuers: false });
    expect(issuer.fetches.discovery).toBe(0);
  });

  it("refuses a jwks_uri at the cloud metadata address even when insecure issuers are allowed", async () => {
    const issuer = await issuerFor();
    issuer.discovery = { body: JSON.stringify({ issuer: issuer.issuer, jwks_uri: "http://169.254.169.254/latest/meta-data/" }) };
    await unavailable(issuer, /refused by address policy: .*link-local/);
  });
});
