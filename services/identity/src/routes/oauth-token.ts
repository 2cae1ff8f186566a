import { tokenExchangeBody, tokenExchangeGrantType, type OAuthError } from "@switchyard/contracts";
import { oauthNoStore, requestIdHeader, sendOAuthError, type Logger } from "@switchyard/runtime";
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import { exchangeToken, OAuthFailure, type ExchangeDeps } from "../federation/exchange.js";

export interface OAuthTokenDeps extends ExchangeDeps {
  logger: Logger;
  /** Exchanges per federation policy per minute, in this process. */
  perPolicyPerMinute: number;
}

/**
 * The form body, for this route only; the rest of identity speaks JSON. RFC 6749 §3.2 says to ignore
 * parameters the server does not know, so their number is bounded only by the body's size, not refused.
 */
export const formBody = express.urlencoded({ extended: false, limit: "64kb", parameterLimit: 10_000 });

/** Whatever fails before or around the route (a body too large or malformed) still answers in OAuth's shape. */
export const oauthTokenErrors =
  (logger: Logger): ErrorRequestHandler =>
  (error: unknown, req, res, _next) =>
    sendOAuthError(res, error, logger, req.headers[requestIdHeader]);

/** The endpoint takes POST only (RFC 6749 §3.2); other methods get 405 in the same shape. */
export const oauthTokenOtherMethods: RequestHandler = (_req, res) => {
  res.set({ ...oauthNoStore, Allow: "POST" }).status(405).json({ error: "invalid_request", error_description: "The token endpoint accepts POST only" } satisfies OAuthError);
};

/** RFC 6749 §5.2: which error code a malformed field earns. */
function malformed(body: Record<string, unknown>, issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): OAuthError {
  const fields = issues.map((i) => String(i.path[0] ?? "body"));
  if (typeof body.grant_type === "string" && body.grant_type !== tokenExchangeGrantType && fields.includes("grant_type")) {
    return { error: "unsupported_grant_type", error_description: `grant_type must be ${tokenExchangeGrantType}` };
  }
  if (fields.length === 1 && fields[0] === "scope") return { error: "invalid_scope", error_description: "scope: only inference is available" };
  return { error: "invalid_request", error_description: issues.map((i) => `${String(i.path[0] ?? "body")}: ${i.message}`).join("; ") };
}

/** A fixed one-minute window per policy: enough to stop a caller hammering the issuer through us. */
function perMinuteLimiter(limit: number) {
  let window = 0;
  const counts = new Map<string, number>();
  return (key: string): boolean => {
    const current = Math.floor(Date.now() / 60_000);
    if (current !== window) {
      window = current;
      counts.clear();
    }
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    return n <= limit;
  };
}

/** `POST /oauth/token`: RFC 8693 token exchange, answering in RFC 6749's error format and never cached. */
export const oauthTokenRoute = (deps: OAuthTokenDeps): RequestHandler => {
  const allow = perMinuteLimiter(deps.perPolicyPerMinute);
  return async (req, res) => {
    res.set(oauthNoStore);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => res.set(headers).status(status).json(body);
    if (!req.is("application/x-www-form-urlencoded")) {
      return send(400, { error: "invalid_request", error_description: "The body must be application/x-www-form-urlencoded" });
    }
    const raw = (req.body ?? {}) as Record<string, unknown>;
    const parsed = tokenExchangeBody.safeParse(raw);
    if (!parsed.success) return send(400, malformed(raw, parsed.error.issues));
    if (!allow(parsed.data.federation_policy_id)) {
      res.set("Retry-After", String(60 - (Math.floor(Date.now() / 1000) % 60)));
      return send(429, { error: "temporarily_unavailable", error_description: "Too many token requests for this policy; retry later" });
    }
    try {
      send(200, await exchangeToken(deps, parsed.data));
    } catch (error) {
      if (error instanceof OAuthFailure) {
        deps.logger.info({ policy: parsed.data.federation_policy_id, reason: error.reason, status: error.status }, "token exchange refused");
        return send(error.status, error.body, error.headers);
      }
      deps.logger.error({ err: error }, "token exchange failed");
      send(500, { error: "server_error", error_description: "The token could not be issued" });
    }
  };
};
