import {
  callerHeader,
  createHttpApp,
  finishHttpApp,
  HttpError,
  mountHealth,
  serviceHeader,
  type CallerSigner,
  type HealthState,
  type Logger,
  type ReadinessCheck,
} from "@switchyard/runtime";
import type { Express, RequestHandler } from "express";
import type { Authenticator } from "./auth/authenticator.js";
import { forwardTo, type Target } from "./forward/targets.js";
import type { RateLimiter } from "./limits/rate-limiter.js";
import { routeFor, type ServiceName } from "./routes.js";

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
}

/**
 * The thin front door: request id, size limit, authentication, rate limit, then the owning service.
 * It never parses a body it forwards and never buffers a stream.
 */
export function createRouterApp(deps: RouterDeps): Express {
  const app = createHttpApp({ logger: deps.logger, parseJson: false });
  mountHealth(app, deps.readiness, deps.health);
  const openapiBody = JSON.stringify(deps.openapi);
  app.get("/api/v1/openapi.json", (_req, res) => {
    res.type("application/json").send(openapiBody);
  });

  const forwarders = Object.fromEntries(
    Object.entries(deps.targets).map(([name, target]) => [name, forwardTo(name, target, deps.logger)]),
  ) as Record<ServiceName, RequestHandler>;

  const admit = async (subject: string, limit: number) => {
    const decision = await deps.rateLimiter.hit(subject, limit);
    if (!decision.allowed) {
      throw new HttpError("rate_limited", "Rate limit exceeded", { limit_per_minute: limit }, { "Retry-After": String(decision.retryAfterSeconds) });
    }
  };

  app.use(async (req, res, next) => {
    const route = routeFor(req.path);
    if (!route) return next();
    res.locals.metricsRoute = route.prefix;
    // Only the router may speak for a caller or a service; whatever a client sent is dropped.
    delete req.headers[callerHeader];
    delete req.headers[serviceHeader];
    const length = Number(req.headers["content-length"] ?? 0);
    if (length > (route.uploads ? deps.maxUploadBytes : deps.maxBodyBytes)) throw new HttpError("payload_too_large", "Request payload too large");
    if (route.public) {
      // Routes that take no key are limited per client address; a credential sent anyway goes no further.
      await admit(`address:${req.ip ?? "unknown"}`, deps.defaultRateLimitPerMinute);
      delete req.headers.authorization;
    } else {
      const key = await deps.authenticator.authenticate(req.headers.authorization);
      await admit(key.hash, key.rateLimitPerMinute ?? deps.defaultRateLimitPerMinute);
      // Services never see the secret; they see who the router says is calling.
      delete req.headers.authorization;
      req.headers[callerHeader] = await deps.signCaller({
        keyHash: key.hash,
        organizationId: key.organizationId,
        workspaceId: key.workspaceId,
        management: key.management,
      });
    }
    forwarders[route.service](req, res, next);
  });

  return finishHttpApp(app, deps.logger);
}
