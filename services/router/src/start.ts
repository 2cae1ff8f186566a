import { buildOpenApiDocument, routes } from "@switchyard/contracts";
import { busReadiness, migrate, type Bus, type CallerSigner, type Db, type HealthState, type Logger } from "@switchyard/runtime";
import type { RequestListener } from "node:http";
import { createRouterApp } from "./app.js";
import { createAuthenticator } from "./auth/authenticator.js";
import { loadConsole } from "./console/console-files.js";
import type { IdentityClient } from "./auth/identity-client.js";
import type { RouterConfig } from "./config.js";
import type { Target } from "./forward/targets.js";
import { memoryRateLimiter, rateLimitMigrations, type RateLimiter } from "./limits/rate-limiter.js";
import { sharedRateLimiter } from "./limits/shared-rate-limiter.js";
import { routeFor, type ServiceName } from "./routes.js";

export interface RouterStartDeps {
  logger: Logger;
  bus: Bus;
  /** Needed only for rate limits shared through Postgres. */
  db?: Db;
  identity: IdentityClient;
  signCaller: CallerSigner;
  targets: Record<ServiceName, Target>;
  health: HealthState;
  /** The console's built files; by default the `dist` folder of the `@switchyard/console` package. */
  consoleDir?: string;
  config: Pick<
    RouterConfig,
    "CONSOLE_ENABLED" | "RATE_LIMIT_PER_MINUTE" | "AUTH_CACHE_TTL_MS" | "AUTH_NEGATIVE_CACHE_TTL_MS" | "RATE_LIMIT_STORE" | "MAX_BODY_BYTES" | "MAX_UPLOAD_BYTES"
  >;
}

export interface RunningRouter {
  app: RequestListener;
  /** Drops a key from the authentication cache; for identity in the same process, at its change's commit. */
  forgetKey(hash: string): void;
  stop(): Promise<void>;
}

export async function startRouter(deps: RouterStartDeps): Promise<RunningRouter> {
  const { config, logger } = deps;
  const authenticator = createAuthenticator({
    identity: deps.identity,
    ttlMs: config.AUTH_CACHE_TTL_MS,
    negativeTtlMs: config.AUTH_NEGATIVE_CACHE_TTL_MS,
  });
  // Every router replica hears every key change, so a disabled key stops working everywhere at once.
  const subscription = await deps.bus.listen(["identity.api_key.>"], async (event) => {
    if ("hash" in event.data) authenticator.invalidate(event.data.hash);
  });
  const rateLimiter = await openRateLimiter(config.RATE_LIMIT_STORE, deps.db, logger);
  const app = createRouterApp({
    logger,
    authenticator,
    rateLimiter,
    defaultRateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
    signCaller: deps.signCaller,
    targets: deps.targets,
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxUploadBytes: config.MAX_UPLOAD_BYTES,
    health: deps.health,
    readiness: { ...(deps.db ? { database: () => deps.db!.ping() } : {}), ...busReadiness(deps.bus) },
    // Describe what this gateway serves: operations of services not deployed yet are left out.
    console: config.CONSOLE_ENABLED ? await loadConsole(logger, deps.consoleDir) : undefined,
    openapi: buildOpenApiDocument(routes.filter((r) => r.path === "/openapi.json" || routeFor(`/api/v1${r.path}`) !== undefined)),
  });
  return {
    app,
    forgetKey: (hash) => authenticator.invalidate(hash),
    async stop() {
      await subscription.stop();
      await rateLimiter.close();
    },
  };
}

async function openRateLimiter(store: RouterConfig["RATE_LIMIT_STORE"], db: Db | undefined, logger: Logger): Promise<RateLimiter> {
  if (store === "postgres" || (store === undefined && db?.kind === "postgres")) {
    if (!db) throw new Error("RATE_LIMIT_STORE=postgres needs DATABASE_URL");
    await migrate(db, "router", rateLimitMigrations);
    return sharedRateLimiter(db, { logger });
  }
  return memoryRateLimiter();
}
