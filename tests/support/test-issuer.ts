import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTHeaderParameters, type JWTPayload } from "jose";
import { listenLocal } from "./listen.js";

/** How a down issuer fails: a 503 answer, or the connection dropped before any answer. */
export type Outage = "503" | "reset";

/** A canned answer that replaces the real discovery document or key set. */
export interface CannedAnswer {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
}

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
  published: boolean;
}

export interface TestIssuer {
  /** The issuer identifier: `http://127.0.0.1:<port>` plus the path it was created with. */
  issuer: string;
  jwksUri: string;
  /** The kid `sign` uses unless told otherwise: the most recently added key. */
  kid: string;
  /** Requests received for each document, answered or not. */
  fetches: { discovery: number; jwks: number };
  /** While set, every request fails this way. */
  down: Outage | null;
  /** While set, served instead of the real document. */
  discovery: CannedAnswer | null;
  jwks: CannedAnswer | null;
  /** Signs a JWT with `iss`, `aud: "switchyard"`, `sub`, `iat` and a five-minute `exp` unless `claims` overrides them. */
  sign(claims?: JWTPayload, options?: { kid?: string; header?: Partial<JWTHeaderParameters> }): Promise<string>;
  /** Generates and publishes a key for `alg` and makes it the signing key; returns its kid. */
  addKey(alg?: string): Promise<string>;
  /** Stops publishing a key (a rotation's second half); `sign` can still use it, as a stolen key could. */
  retireKey(kid: string): void;
  publicKeyPem(kid?: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * A workload-identity issuer on 127.0.0.1 serving `/.well-known/openid-configuration` and a JWKS under
 * `path`, signing with keys it generates. `now` (ms) sets the clock for default `iat`/`exp`.
 */
export async function startTestIssuer(options: { path?: string; alg?: string; now?: () => number } = {}): Promise<TestIssuer> {
  const path = options.path ?? "";
  const base = path.endsWith("/") ? path.slice(0, -1) : path;
  const now = options.now ?? Date.now;
  const keys: SigningKey[] = [];

  const server = createServer((req, res) => {
    const document = req.url === `${base}/.well-known/openid-configuration` ? "discovery" : req.url === `${base}/jwks` ? "jwks" : null;
    if (!document) return void res.writeHead(404).end();
    issuer.fetches[document]++;
    if (issuer.down === "reset") return void req.socket.destroy();
    if (issuer.down === "503") return void res.writeHead(503).end("down");
    const canned = issuer[document];
    if (canned) return void res.writeHead(canned.status ?? 200, { "content-type": "application/json", ...canned.headers }).end(canned.body ?? "");
    const real =
      document === "discovery"
        ? { issuer: issuer.issuer, jwks_uri: issuer.jwksUri, id_token_signing_alg_values_supported: [...new Set(keys.map((k) => k.alg))] }
        : { keys: keys.filter((k) => k.published).map((k) => k.jwk) };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(real));
  });
  const { baseUrl, stop } = await listenLocal(server);
  const origin = new URL(baseUrl).origin;

  const keyNamed = (kid: string) => {
    const key = keys.find((k) => k.kid === kid);
    if (!key) throw new Error(`test issuer has no key ${kid}`);
    return key;
  };

  const issuer: TestIssuer = {
    issuer: `${origin}${path}`,
    jwksUri: `${origin}${base}/jwks`,
    kid: "",
    fetches: { discovery: 0, jwks: 0 },
    down: null,
    discovery: null,
    jwks: null,
    async sign(claims = {}, signOptions = {}) {
      const key = keyNamed(signOptions.kid ?? issuer.kid);
      const iat = Math.floor(now() / 1000);
      const payload = { iss: issuer.issuer, aud: "switchyard", sub: "repo:acme/app:ref:refs/heads/main", iat, exp: iat + 300, ...claims };
      return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT", ...signOptions.header }).sign(key.privateKey);
    },
    async addKey(alg = options.alg ?? "RS256") {
      const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
      const kid = randomUUID();
      keys.push({ kid, alg, privateKey, publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" }, published: true });
      issuer.kid = kid;
      return kid;
    },
    retireKey(kid) {
      keyNamed(kid).published = false;
    },
    publicKeyPem: (kid = issuer.kid) => exportSPKI(keyNamed(kid).publicKey),
    stop,
  };
  await issuer.addKey();
  return issuer;
}
