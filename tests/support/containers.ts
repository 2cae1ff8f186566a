import type { BackendPlan } from "./backends.js";

export interface StartedBackends {
  /** The variables the tests read, as CI would set them. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

const images = { postgres: "postgres:15-alpine", nats: "nats:2.10-alpine", minio: "minio/minio:latest" };
const s3Credentials = { user: "switchyard", password: "switchyard-test-secret" };

/**
 * Starts a container for each backend the plan gives to containers: Postgres with trust auth, NATS with
 * JetStream, and MinIO for S3. testcontainers is loaded only here, so runs without Docker never load it.
 */
export async function startBackendContainers(plan: BackendPlan): Promise<StartedBackends> {
  const { GenericContainer, Wait } = await import("testcontainers");
  const started: Array<{ stop(): Promise<unknown> }> = [];
  const env: Record<string, string> = {};
  try {
    if (plan.database === "container") {
      const pg = await new GenericContainer(images.postgres)
        .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust" })
        .withExposedPorts(5432)
        .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
        .start();
      started.push(pg);
      env.DATABASE_URL = `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`;
    }
    if (plan.nats === "container") {
      const nats = await new GenericContainer(images.nats).withCommand(["-js"]).withExposedPorts(4222).withWaitStrategy(Wait.forLogMessage(/Server is ready/)).start();
      started.push(nats);
      env.NATS_URL = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
    }
    if (plan.s3 === "container") {
      const minio = await new GenericContainer(images.minio)
        .withEnvironment({ MINIO_ROOT_USER: s3Credentials.user, MINIO_ROOT_PASSWORD: s3Credentials.password })
        .withCommand(["server", "/data"])
        .withExposedPorts(9000)
        .withWaitStrategy(Wait.forHttp("/minio/health/live", 9000))
        .start();
      started.push(minio);
      Object.assign(env, {
        S3_ENDPOINT: `http://${minio.getHost()}:${minio.getMappedPort(9000)}`,
        S3_REGION: "us-east-1",
        S3_ACCESS_KEY_ID: s3Credentials.user,
        S3_SECRET_ACCESS_KEY: s3Credentials.password,
        S3_FORCE_PATH_STYLE: "true",
      });
    }
  } catch (error) {
    await Promise.allSettled(started.map((c) => c.stop()));
    throw error;
  }
  return { env, stop: async () => void (await Promise.allSettled(started.map((c) => c.stop()))) };
}
