import { z } from "zod";

/**
 * Parses environment variables once at start with a zod schema. A bad value stops the process with one
 * readable line per problem instead of failing later in a request.
 */
export function parseEnv<T extends z.ZodType>(schema: T, env: Record<string, string | undefined> = process.env): z.infer<T> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join(".") || "(env)"}: ${issue.message}`);
  throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/**
 * For a process's entry point: a configuration error that stops the start (a bad variable, a bad catalog
 * file) prints its problems, one per line, and exits 1, without a stack trace that says nothing more. Any
 * other uncaught error is printed with its stack and exits 1, as Node does.
 */
export function exitOnConfigError(): void {
  process.on("uncaughtException", (error) => {
    process.stderr.write(error instanceof ConfigError ? `${error.message}\n` : `${error.stack ?? String(error)}\n`);
    process.exit(1);
  });
}

/** An optional string variable where an empty value means unset. */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));

/** A true/false variable (`true`/`1`, `false`/`0`); anything else stops the process at start. */
export const envFlag = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0"])
    .default(fallback ? "true" : "false")
    .transform((v) => v === "true" || v === "1");

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

/** Variables every Switchyard process understands. */
export const commonEnv = {
  /** Log level: trace, debug, info, warn, error, fatal or silent. */
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  /** Log lines as JSON (`json`), readable text (`pretty`), or `auto`: text on a terminal, JSON otherwise. */
  LOG_FORMAT: z.enum(["auto", "json", "pretty"]).default("auto"),
  /** Address to listen on. */
  HOST: z.string().default("127.0.0.1"),
  /** Postgres URL; unset means the embedded PGlite under SWITCHYARD_DATA_DIR. */
  DATABASE_URL: optionalString,
  /** NATS URL with JetStream; unset means the in-process bus (standalone only). */
  NATS_URL: optionalString,
  /** Prefix for NATS subjects and streams, so several deployments or tests can share one NATS. */
  NATS_NAMESPACE: optionalString,
  /** Where embedded data lives (PGlite files, disk object storage). */
  SWITCHYARD_DATA_DIR: z.string().default("./.switchyard"),
  /** Secret shared by the deployment's processes to sign the internal caller header (32+ characters). */
  SWITCHYARD_INTERNAL_SECRET: optionalString.pipe(z.string().min(32, "must be at least 32 characters").optional()),
  /**
   * Other secrets whose internal headers are still accepted (comma-separated), while the secret is rotated:
   * first the new one here on every process, then it becomes the secret and the old one moves here.
   */
  SWITCHYARD_INTERNAL_SECRETS_ACCEPTED: z
    .string()
    .default("")
    .transform((value) => value.split(",").map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.string().min(32, "each must be at least 32 characters"))),
  /** Largest JSON request body accepted, in bytes. */
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(10 * 1024 * 1024),
  /** Largest body of the routes that take uploads (audio, reference images, files), in bytes. */
  MAX_UPLOAD_BYTES: z.coerce.number().int().min(1024).default(48 * 1024 * 1024),
  /** How long a draining process waits for in-flight requests and streams before closing them. */
  DRAIN_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
  /**
   * On SIGTERM, how long a process keeps accepting while `/readyz` already fails, so that load balancers
   * (the router's replica checks, a Kubernetes Service) stop sending before it stops listening.
   */
  DRAIN_DELAY_MS: z.coerce.number().int().min(0).default(0),
  /**
   * This process among the replicas of its service: the owner of the spend holds it takes. Unique among
   * live replicas, and the same after a restart where possible (a pod's name), so a replica that starts
   * again frees what its previous run held. Unset: the host name and port.
   */
  SWITCHYARD_REPLICA_ID: optionalString.pipe(z.string().max(200).optional()),
  /**
   * The lease of a spend hold: its replica renews it every third of this while it runs; identity frees the
   * holds of a replica that stopped renewing (killed) this long after its last renewal. The same everywhere.
   */
  SPEND_HOLD_LEASE_MS: z.coerce.number().int().min(1000).max(600_000).default(15_000),
  /**
   * How long a client may take to send a request's headers; a connection still sending them after this is
   * closed with 408, so half-sent requests cannot hold sockets.
   */
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(300_000).default(10_000),
};

/** How long a service that calls providers waits on one, per attempt (the request deadline bounds them all). */
export const upstreamTimeoutsEnv = {
  /**
   * From sending a request to a provider to its first byte of answer: a stream's first event, a buffered
   * answer whole (providers send a buffered answer only once it is complete). Past it the next endpoint is
   * tried and this one rests, so a provider that accepts and never answers costs this, not the deadline.
   */
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: z.coerce.number().int().min(100).default(120_000),
  /** Longest silence between two events of a provider's stream; past it the stream ends with an in-band error. */
  UPSTREAM_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).default(120_000),
  /** How long an endpoint that failed (timed out, answered 5xx, refused the connection) goes behind healthy ones. */
  UPSTREAM_FAILURE_COOLDOWN_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /**
   * Width of the time buckets in which each replica counts its endpoints' attempts, latency and throughput:
   * the resolution of the published windows, and the window of recent outages the default order avoids.
   */
  ENDPOINT_STATS_BUCKET_MS: z.coerce.number().int().min(1_000).max(300_000).default(60_000),
  /** How often each replica writes its endpoint statistics and reads every replica's. */
  ENDPOINT_STATS_INTERVAL_MS: z.coerce.number().int().min(200).max(60_000).default(5_000),
};

/** The timeouts of `upstreamTimeoutsEnv`, as the upstream library takes them. */
export const upstreamTimeoutsOf = (config: { UPSTREAM_FIRST_BYTE_TIMEOUT_MS: number; UPSTREAM_IDLE_TIMEOUT_MS: number; UPSTREAM_FAILURE_COOLDOWN_MS: number }) => ({
  firstByteMs: config.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
  idleMs: config.UPSTREAM_IDLE_TIMEOUT_MS,
  failureCooldownMs: config.UPSTREAM_FAILURE_COOLDOWN_MS,
});
