import { dockerAnswers, needsContainers, planBackends } from "./backends.js";
import { exportBackendEnv, testEnv } from "./config.js";
import { startBackendContainers } from "./containers.js";

/**
 * Runs once before the test files: backends the environment does not name come from containers when a
 * Docker engine answers (a platform team's CI needs no setup), else the tests use their embedded defaults.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const env = { databaseUrl: testEnv.databaseUrl, natsUrl: testEnv.natsUrl, s3Endpoint: testEnv.s3.S3_ENDPOINT };
  const missing = !env.databaseUrl || !env.natsUrl || !env.s3Endpoint;
  const plan = planBackends(env, missing && (await dockerAnswers(testEnv.dockerHost)));
  process.stdout.write(`test backends: database ${plan.database}, NATS ${plan.nats}, S3 ${plan.s3}\n`);
  if (!needsContainers(plan)) return undefined;
  const started = await startBackendContainers(plan);
  // Test files run in worker processes started after this, which read these variables as CI's.
  exportBackendEnv(started.env);
  return () => started.stop();
}
