import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import {
  callerHeader,
  createHttpApp,
  finishHttpApp,
  HttpError,
  mountHealth,
  noteRequest,
  pathOf,
  requestIdHeader,
  sendAnthropicError,
  sendOAuthError,
  serviceOf,
  servePlain,
  serviceHeader,
  type CallerSigner,
  type HealthState,
  type Logger,
  type ReadinessCheck,
} from "@switchyard/runtime";
import type { Authenticator } from "./auth/authenticator.js";
import type { ConsoleHandler } from "./console/console-files.js";
import { forwardTo, type Forwarder, type Target } from "./forward/targets.js";
import { RateLimitUnavailableError, type RateLimiter } from "./limits/rate-limiter.js";
import { routeFor, type ServiceName, type ServiceRoute } from "./routes.js";

/**
 * The caller's credential: `Authorization: Bearer <key>`, or the key alone in `x-api-key` as the Anthropic SDK
 * and Claude Code send it; Authorization wins when both came.
 */
function credentialOf(req: IncomingMessage): string | undefined {
  if (req.headers.authorization) return req.headers.authorization;
  const key = req.headers["x-api-key"];
  return typeof key === "string" && key.trim() ? `Bearer ${key.trim()}` : undefined;
}

export interface RouterDeps {
  logger: Logger;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  defaultRateLimitPerMinute: number;
  signCaller: CallerSigner;
  targets: Record<ServiceName, Target>;
  maxBodyBytes: number;
  maxUploadBytes: number;
  health: HealthState;
  readiness: Record<string, ReadinessCheck>;
  openapi: object;
  /** Serves the operator console at `/console`; absent when CONSOLE_ENABLED=false. */
  console?: ConsoleHandler;
}

/**
 * The thin front door: request id, size limit, authentication, rate limit, then the owning service.
 * It never parses a body it forwards and never buffers a stream. Forwarded routes, every request a client
 * makes of the API, run on plain `node:http` (a framework's routing and response helpers cost as much CPU
 * as the rest of this hop); express serves the probes, the OpenAPI document and unknown paths.
 */
export function createRouterApp(deps: RouterDeps): RequestListener {
  const { logger } = deps;
  const service = serviceOf(logger);
  const app = createHttpApp({ logger, parseJson: false });
  mountHealth(app, deps.readiness, deps.health);
  const openapiBody = JSON.stringify(deps.openapi);
  app.get("/api/v1/openapi.json", (_req, res) => {
    res.type("application/json").send(openapiBody);
  });
  finishHttpApp(app, logger);

  const forwarders = Object.fromEntries(
    Object.entries(deps.targets).map(([name, target]) => [name, forwardTo(name, target, logger)]),
  ) as Record<ServiceName, Forwarder>;

  const admit = async (subject: string, limit: number) => {
    const decision = await deps.rateLimiter.hit(subject, limit).catch((error: unknown) => {
      // The shared count is out of reach: a retry soon will likely pass, so 503, never a 500 or a 429.
      if (error instanceof RateLimitUnavailableError) {
        throw new HttpError("unavailable", "Rate limiting is temporarily unavailable", undefined, { "Retry-After": String(error.retryAfterSeconds) });
      }
      throw error;
    });
    if (!decision.allowed) {
      throw new HttpError("rate_limited", "Rate limit exceeded", { limit_per_minute: limit }, { "Retry-After": String(decision.retryAfterSeconds) });
    }
  };

  async function forward(route: ServiceRoute, req: IncomingMessage, res: ServerResponse) {
    // Only the router may speak for a caller or a service; whatever a client sent is dropped.
    delete req.headers[callerHeader];
    delete req.headers[serviceHeader];
    const length = Number(req.headers["content-length"] ?? 0);
    if (length > (route.uploads ? deps.maxUploadBytes : deps.maxBodyBytes)) throw new HttpError("payload_too_large", "Request payload too large");
    if (route.public) {
      // Routes that take no key are limited per client address; a credential sent anyway goes no further.
      await admit(`address:${req.socket.remoteAddress ?? "unknown"}`, deps.defaultRateLimitPerMinute);
      delete req.headers.authorization;
      delete req.headers["x-api-key"];
    } else {
      const key = await deps.authenticator.authenticate(credentialOf(req));
      noteRequest({ key: key.hash.slice(0, 12) });
      await admit(key.hash, key.rateLimitPerMinute ?? deps.defaultRateLimitPerMinute);
      // Services never see the secret; they see who the router says is calling.
      delete req.headers.authorization;
      delete req.headers["x-api-key"];
      req.headers[callerHeader] = await deps.signCaller({
        keyHash: key.hash,
        organizationId: key.organizationId,
        workspaceId: key.workspaceId,
        management: key.management,
      });
    }
    forwarders[route.service](req, res);
  }

  return (req, res) => {
    const path = pathOf(req.url);
    const route = routeFor(path);
    if (!route) {
      if (deps.console && (path === "/console" || path.startsWith("/console/"))) return deps.console(req, res, path);
      return void app(req, res);
    }
    const sendError = route.oauthErrors ? sendOAuthError : route.anthropicErrors ? sendAnthropicError : undefined;
    const handle = sendError ? () => forward(route, req, res).catch((error: unknown) => sendError(res, error, logger, req.headers[requestIdHeader])) : () => forward(route, req, res);
    servePlain(req, res, { logger, service, route: route.prefix, observe: true }, handle);
  };
}
