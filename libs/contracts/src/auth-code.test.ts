import { describe, expect, it } from "vitest";
import { issuePaths } from "../../../tests/support/schema-checks.js";
import { createAuthCodeBody, exchangeAuthCodeBody, isAllowedCallbackUrl } from "./auth-code.js";
import { tokenExchangeBody, tokenExchangeResponse } from "./oauth-token.js";

/** The dotted paths of every issue; empty when the value is valid. */

const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const workspaceId = "3f1c2a9e-5b7d-4c1e-9a2b-6d8e0f1a2b3c";

describe("POST /auth/keys/code body", () => {
  it("accepts https callbacks and http ones on localhost or 127.0.0.1 at whichever port", () => {
    for (const callback_url of [
      "https://myapp.com/auth/callback",
      "https://localhost/cb",
      "http://localhost:3000/cb",
      "http://127.0.0.1:8765/callback?x=1",
      "http://localhost/cb",
    ]) {
      expect(issuePaths(createAuthCodeBody, { callback_url })).toEqual([]);
    }
  });

  it("accepts every optional field under OpenRouter's names", () => {
    const body = {
      callback_url: "https://myapp.com/auth/callback",
      code_challenge: challenge,
      code_challenge_method: "S256",
      limit: 100,
      expires_at: "2027-12-31T23:59:59Z",
      key_label: "My Custom Key",
      usage_limit_type: "monthly",
      workspace_id: workspaceId,
      spawn_agent: "my-agent",
      spawn_cloud: "aws-us-east-1",
    };
    expect(issuePaths(createAuthCodeBody, body)).toEqual([]);
    expect(issuePaths(createAuthCodeBody, { ...body, code_challenge_method: "plain", expires_at: null })).toEqual([]);
    expect(issuePaths(createAuthCodeBody, { ...body, expires_at: "2027-12-31T23:59:59.123456Z" })).toEqual([]);
  });

  it.each([
    ["callback_url", { callback_url: "http://myapp.com/cb" }],
    ["callback_url", { callback_url: "ftp://localhost/cb" }],
    ["callback_url", { callback_url: "http://localhost.evil.com/cb" }],
    ["callback_url", { callback_url: "not a url" }],
    ["code_challenge", { code_challenge: "short" }],
    ["code_challenge", { code_challenge: `${challenge}A`, code_challenge_method: "S256" }],
    ["code_challenge", { code_challenge: "A".repeat(128), code_challenge_method: "S256" }],
    ["code_challenge", { code_challenge: `${challenge.slice(0, 42)}.`, code_challenge_method: "S256" }],
    ["code_challenge_method", { code_challenge_method: "S512" }],
    ["limit", { limit: -1 }],
    ["expires_at", { expires_at: "2027-12-31T23:59Z" }],
    ["expires_at", { expires_at: "2027-12-31" }],
    ["expires_at", { expires_at: "2027-12-31T23:59:59+02:00" }],
    ["expires_at", { expires_at: "2027-13-45T23:59:59Z" }],
    ["key_label", { key_label: "x".repeat(101) }],
    ["usage_limit_type", { usage_limit_type: "yearly" }],
    ["workspace_id", { workspace_id: "default" }],
  ])("rejects a bad %s", (field, patch) => {
    expect(issuePaths(createAuthCodeBody, { callback_url: "https://myapp.com/cb", ...patch })).toContain(field);
  });

  it("requires callback_url", () => {
    expect(issuePaths(createAuthCodeBody, { limit: 5 })).toEqual(["callback_url"]);
  });

  it("rejects unknown fields", () => {
    const result = createAuthCodeBody.safeParse({ callback_url: "https://a.io/cb", scope: "all" });
    expect(result.error?.issues[0]).toMatchObject({ code: "unrecognized_keys", keys: ["scope"] });
  });
});

describe("callback URLs", () => {
  it.each([
    "https://myapp.com/auth/callback",
    "https://myapp.com:8443/cb?next=/home&email=a@b.example",
    "HTTPS://MyApp.com/cb",
    "https://bücher.example/cb",
    "https://localhost/cb",
    "http://localhost",
    "http://localhost:3000/cb",
    "http://LOCALHOST:3000/cb",
    "http://127.0.0.1:65535/callback?x=1",
    "http://localhost:3000/cb?user=a@evil.com",
  ])("accepts %s", (url) => {
    expect(isAllowedCallbackUrl(url)).toBe(true);
  });

  it.each([
    "http://myapp.com/cb",
    "http://localhost.evil.com/cb",
    "http://localhost.:3000/cb",
    "http://localhost@evil.com/cb",
    "http://localhost:3000@evil.com/cb",
    "http://evil.com@localhost/cb",
    "http://user:pass@localhost:3000/cb",
    "https://myapp.com@evil.com/cb",
    "https://@myapp.com/cb",
    "http://127.0.0.1.evil.com/cb",
    "http://evil.com#@localhost",
    "https://myapp.com:8443/cb?next=/home#frag",
    "http://localhost:3000/cb#",
    "http://evil.com?@localhost",
    "http://evil.com/localhost",
    "http://localhost%2eevil.com/cb",
    "http://127.1/cb",
    "http://0x7f.0.0.1/cb",
    "http://2130706433/cb",
    "http://[::1]:3000/cb",
    "http://localhost:3000\\@evil.com",
    "http:\\\\localhost/cb",
    "https:\\\\myapp.com/cb",
    "http:localhost:3000/cb",
    "https:myapp.com/cb",
    "https:///myapp.com/cb",
    "//myapp.com/cb",
    "http://localhost:99999/cb",
    " http://localhost/cb",
    "http://local\thost/cb",
    "https://myapp.com/c\nb",
    "https://myapp.com/c\u0000b",
    "javascript:alert(1)",
    "javascript://localhost/%0aalert(1)",
    "data:text/html,hi",
    "ftp://localhost/cb",
    "file:///etc/passwd",
    "ws://localhost:3000/cb",
    "not a url",
    "",
  ])("rejects %j", (url) => {
    expect(isAllowedCallbackUrl(url)).toBe(false);
  });
});

describe("POST /auth/keys body (PKCE exchange)", () => {
  it("accepts a code alone or with its verifier", () => {
    expect(issuePaths(exchangeAuthCodeBody, { code: "auth_code_xyz789" })).toEqual([]);
    const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    expect(issuePaths(exchangeAuthCodeBody, { code: "c", code_verifier: verifier, code_challenge_method: "S256" })).toEqual([]);
    expect(issuePaths(exchangeAuthCodeBody, { code: "c", code_challenge_method: null })).toEqual([]);
  });

  it.each([
    ["code", { code: "" }],
    ["code_verifier", { code: "c", code_verifier: "too-short" }],
    ["code_challenge_method", { code: "c", code_challenge_method: "sha1" }],
  ])("rejects a bad %s", (field, body) => {
    expect(issuePaths(exchangeAuthCodeBody, body)).toContain(field);
  });
});

describe("POST /oauth/token form", () => {
  const form = {
    grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
    subject_token: "eyJhbGciOiJSUzI1NiJ9.e30.sig",
    subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
    federation_policy_id: "7d0c6f8e-2b1a-4c3d-8e9f-0a1b2c3d4e5f",
  };

  it("accepts the required fields, the optional ones and a 16384-character token", () => {
    expect(issuePaths(tokenExchangeBody, form)).toEqual([]);
    const full = { ...form, requested_token_type: "urn:ietf:params:oauth:token-type:access_token", scope: "inference" };
    expect(tokenExchangeBody.parse(full)).toMatchObject({ scope: "inference" });
    expect(issuePaths(tokenExchangeBody, { ...form, subject_token: "x".repeat(16384) })).toEqual([]);
  });

  it("treats empty parameters as omitted and ignores unknown ones (RFC 6749 §3.2)", () => {
    const parsed = tokenExchangeBody.parse({ ...form, scope: "", requested_token_type: "", audience: "x" });
    expect(parsed.scope).toBeUndefined();
    expect(parsed.requested_token_type).toBeUndefined();
    expect(parsed).not.toHaveProperty("audience");
  });

  it.each([
    ["grant_type", { grant_type: "client_credentials" }],
    ["subject_token", { subject_token: "" }],
    ["subject_token", { subject_token: "x".repeat(16385) }],
    ["subject_token_type", { subject_token_type: "urn:ietf:params:oauth:token-type:id_token" }],
    ["federation_policy_id", { federation_policy_id: "policy-1" }],
    ["requested_token_type", { requested_token_type: "urn:ietf:params:oauth:token-type:refresh_token" }],
    ["scope", { scope: "admin" }],
  ])("rejects a bad %s", (field, patch) => {
    expect(issuePaths(tokenExchangeBody, { ...form, ...patch })).toContain(field);
  });

  it("rejects each missing required field", () => {
    for (const field of Object.keys(form)) {
      const body: Record<string, string> = { ...form };
      delete body[field];
      expect(issuePaths(tokenExchangeBody, body)).toContain(field);
    }
  });

  it("caps expires_in at 900 seconds and fixes the token types", () => {
    const response = {
      access_token: "eyJ...",
      issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
      token_type: "Bearer",
      expires_in: 900,
      scope: "inference",
    };
    expect(issuePaths(tokenExchangeResponse, response)).toEqual([]);
    expect(issuePaths(tokenExchangeResponse, { ...response, expires_in: 901 })).toEqual(["expires_in"]);
    expect(issuePaths(tokenExchangeResponse, { ...response, expires_in: 1.5 })).toEqual(["expires_in"]);
    expect(issuePaths(tokenExchangeResponse, { ...response, token_type: "bearer" })).toEqual(["token_type"]);
  });
});
