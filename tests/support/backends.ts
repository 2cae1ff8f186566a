import { request } from "node:http";

/**
 * Where a test run's shared backends come from, in order: the environment (CI sets DATABASE_URL,
 * NATS_URL and S3_ENDPOINT), else containers when a Docker engine answers, else the embedded defaults
 * and processes the tests start themselves (PGlite, a nats-server of their own, objects on disk).
 */
export type BackendSource = "environment" | "container" | "embedded";

export interface BackendPlan {
  database: BackendSource;
  nats: BackendSource;
  s3: BackendSource;
}

export interface BackendEnv {
  databaseUrl: string | undefined;
  natsUrl: string | undefined;
  s3Endpoint: string | undefined;
}

export function planBackends(env: BackendEnv, dockerAnswers: boolean): BackendPlan {
  const source = (value: string | undefined): BackendSource => (value ? "environment" : dockerAnswers ? "container" : "embedded");
  return { database: source(env.databaseUrl), nats: source(env.natsUrl), s3: source(env.s3Endpoint) };
}

export const needsContainers = (plan: BackendPlan): boolean => Object.values(plan).includes("container");

/** How to reach a Docker engine: DOCKER_HOST (unix:// or tcp://), else the default socket. */
export function dockerEndpoint(dockerHost: string | undefined): { socketPath: string } | { host: string; port: number } {
  if (!dockerHost) return { socketPath: "/var/run/docker.sock" };
  const url = new URL(dockerHost);
  if (url.protocol === "unix:") return { socketPath: url.pathname };
  return { host: url.hostname, port: Number(url.port || 2375) };
}

/** True when a Docker engine answers its `/_ping` within the timeout; a missing socket is a quick no. */
export function dockerAnswers(dockerHost: string | undefined, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ ...dockerEndpoint(dockerHost), path: "/_ping", method: "GET", timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}
