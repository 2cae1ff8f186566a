import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dockerAnswers, needsContainers, planBackends } from "./backends.js";
import { exportBackendEnv, testEnv, useTempFolder } from "./config.js";
import { startBackendContainers } from "./containers.js";

/**
 * Runs once before the test files. Every temporary file of the run (catalogs, data directories, audio,
 * browser profiles, those of the processes tests start) goes under one folder, which the end of the run
 * removes: test files and their processes start after this and take `TMPDIR` as their `os.tmpdir()`.
 * Backends the environment does not name come from containers when a Docker engine answers (a platform
 * team's CI needs no setup), else the tests use their embedded defaults.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const runDir = await mkdtemp(join(tmpdir(), "switchyard-run-"));
  // Others may enter it, as /tmp: the sandbox's containers run as users of their own.
  await chmod(runDir, 0o755);
  useTempFolder(runDir);
  const removeRunDir = () => rm(runDir, { recursive: true, force: true, maxRetries: 3 });
  const env = { databaseUrl: testEnv.databaseUrl, natsUrl: testEnv.natsUrl, s3Endpoint: testEnv.s3.S3_ENDPOINT };
  const missing = !env.databaseUrl || !env.natsUrl || !env.s3Endpoint;
  const plan = planBackends(env, missing && (await dockerAnswers(testEnv.dockerHost)));
  process.stdout.write(`test backends: database ${plan.database}, NATS ${plan.nats}, S3 ${plan.s3}\n`);
  if (!needsContainers(plan)) return removeRunDir;
  const started = await startBackendContainers(plan);
  // Test files run in worker processes started after this, which read these variables as CI's.
  exportBackendEnv(started.env);
  return async () => {
    await started.stop();
    await removeRunDir();
  };
}
