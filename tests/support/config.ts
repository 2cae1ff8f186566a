/**
 * The only place tests read the environment: CI points them at real backends with the same variables
 * the gateway uses (DATABASE_URL, NATS_URL, S3_ENDPOINT); unset means containers where a Docker engine
 * answers (tests/support/global-setup.ts), else the embedded defaults.
 */
export const testEnv = {
  databaseUrl: process.env.DATABASE_URL || undefined,
  natsUrl: process.env.NATS_URL || undefined,
  /** An S3-compatible server (CI starts one); its variables are passed to the gateways tests start. */
  s3: Object.fromEntries(
    ["S3_ENDPOINT", "S3_REGION", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "S3_FORCE_PATH_STYLE"].flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])),
  ) as Record<string, string>,
  /** A Node.js 24 binary (`.ci/run` installs one from the npm registry) to run the gateway on the Active LTS. */
  node24: process.env.NODE24_BIN || undefined,
  /** Where `.ci/run` installs the coding agents from the npm registry (`node_modules/.bin/claude`, `codex`). */
  agentsDir: process.env.AGENTS_DIR || undefined,
  /** CI installs every tool the tests need; there, a missing one is a failure, not a skip. */
  ci: Boolean(process.env.CI),
  /** Spawned processes get exactly the environment a test gives them, plus PATH. */
  path: process.env.PATH ?? "",
  /**
   * What npm needs when a test runs it: its cache and settings under HOME, a proxy where one is set, and the
   * certificate authorities of a network that re-signs TLS (without them npm retries the registry for minutes).
   */
  npm: Object.fromEntries(
    ["HOME", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"].flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])),
  ) as Record<string, string>,
  /** Where a Docker engine answers, for backends from containers (tests/support/global-setup.ts). */
  dockerHost: process.env.DOCKER_HOST || undefined,
};

/** Backends started for this run (containers) become the variables the test workers read. */
export function exportBackendEnv(vars: Record<string, string>): void {
  Object.assign(process.env, vars);
}

/** Makes `dir` the `os.tmpdir()` of this process and of the test files and processes started after it. */
export function useTempFolder(dir: string): void {
  process.env.TMPDIR = dir;
}
