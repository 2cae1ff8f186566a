/**
 * The only place tests read the environment: CI points them at real backends with the same variables
 * the gateway uses (DATABASE_URL, NATS_URL, S3_ENDPOINT); unset means the embedded defaults.
 */
export const testEnv = {
  databaseUrl: process.env.DATABASE_URL || undefined,
  natsUrl: process.env.NATS_URL || undefined,
  /** Spawned processes get exactly the environment a test gives them, plus PATH. */
  path: process.env.PATH ?? "",
};
