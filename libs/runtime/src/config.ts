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
 * file) prints its problems, one per line, and exits 1, without a stack trace that says nothing more. Every
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

/** A true/false variable (`true`/`1`, `false`/`0`); another value stops the process at start. */
export const envFlag = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0"])
    .default(fallback ? "true" : "false")
    .transform((v) => v === "true" || v === "1");

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

/** `a=1,b=2` (values may be percent-encoded), as OpenTelemetry's exporters read their header variables. */
const otlpHeaderList = z
  .string()
  .default("")
  .transform((text, ctx) => {
    try {
      return Object.fromEntries(
        text
          .split(",")
          .map((pair) => pair.split("="))
          .filter((parts) => parts.length >= 2 && parts[0]!.trim())
          .map(([name, ...value]) => [name!.trim().toLowerCase(), decodeURIComponent(value.join("=").trim())]),
      ) as Record<string, string>;
    } catch {
      ctx.addIssue({ code: "custom", message: "a value has a % that is not a percent-encoded byte (write %25 for %)" });
      return z.NEVER;
    }
  });

/**
 * OpenTelemetry's standard variables for traces, read by every process. Unset endpoints mean no traces at
 * all: a request then costs nothing beyond what it cost before.
 */
export const tracingEnv = {
  /** An OTLP/HTTP endpoint (an OpenTelemetry Collector, Jaeger, Tempo…); spans go to `<endpoint>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.pipe(z.url().optional()),
  /** Where the gateway's own spans go, as a whole URL; overrides OTEL_EXPORTER_OTLP_ENDPOINT for them. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalString.pipe(z.url().optional()),
  /** Headers of the OTLP requests, as `name=value` pairs separated by commas. */
  OTEL_EXPORTER_OTLP_HEADERS: otlpHeaderList,
  /** Headers of the trace export requests only, added to OTEL_EXPORTER_OTLP_HEADERS. */
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: otlpHeaderList,
  /** `service.name` of this process's spans; unset, each service's own name (router, inference…). */
  OTEL_SERVICE_NAME: optionalString,
  /** `true` turns tracing off whatever else is set. */
  OTEL_SDK_DISABLED: envFlag(false),
  /** `otlp` exports the gateway's spans; `none` does not. */
  OTEL_TRACES_EXPORTER: z.enum(["otlp", "none"]).default("otlp"),
  /** Which traces are recorded: OpenTelemetry's sampler names; the parent-based ones follow the caller's sampled flag. */
  OTEL_TRACES_SAMPLER: z
    .enum(["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"])
    .default("parentbased_always_on"),
  /** The share of traces recorded by the ratio samplers, 0 to 1. */
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
  /** Most spans waiting to be sent; past it new spans are dropped (and counted). */
  OTEL_BSP_MAX_QUEUE_SIZE: z.coerce.number().int().min(1).max(1_000_000).default(2048),
  /** Most spans in one export request. */
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(512),
  /** Longest wait, in milliseconds, before spans waiting are sent. */
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(10).max(600_000).default(5000),
  /** Longest wait, in milliseconds, for one export request. */
  OTEL_BSP_EXPORT_TIMEOUT: z.coerce.number().int().min(100).max(600_000).default(30_000),
};

/** The variables of `tracingEnv`, as parsed. */
export type TracingConfig = z.infer<z.ZodObject<typeof tracingEnv>>;

/** Variables every Switchyard process understands. */
export const commonEnv = {
  ...tracingEnv,
  /** Log level: trace, debug, info, warn, error, fatal or silent. */
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  /** Log lines as JSON (`json`), readable text (`pretty`), or `auto`: text on a terminal, JSON otherwise. */
  LOG_FORMAT: z.enum(["auto", "json", "pretty"]).default("auto"),
  /** Address to listen on. */
  HOST: z.string().default("127.0.0.1"),
  /** Postgres URL; unset means the embedded PGlite under SWITCHYARD_DATA_DIR. */
  DATABASE_URL: optionalString,
  /**
   * Whether each Postgres connection keeps the parameterised statements it ran, parsed and planned, for the
   * next run. Off only behind a pooler in transaction mode that does not carry them over (PgBouncer before
   * 1.21, or without `max_prepared_statements`).
   */
  DATABASE_PREPARED_STATEMENTS: envFlag(true),
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
