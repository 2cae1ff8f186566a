import { access } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Worker } from "node:worker_threads";

/** The worker's code: opening a data directory that has no cluster creates one; closing writes it out. */
const createInWorker = `
const { workerData } = require("node:worker_threads");
require(workerData.pglite).PGlite.create({ dataDir: workerData.dataDir }).then((pg) => pg.close());
`;

/**
 * Creates the database cluster in a data directory that has none, in a worker thread that then exits.
 * Creating a cluster grows PGlite's WebAssembly memory by a few hundred megabytes, which a WebAssembly
 * memory never gives back while its thread lives; the worker's goes when the worker ends, so a first
 * start holds little more memory than every start after it.
 */
export async function createCluster(dataDir: string): Promise<void> {
  if (await access(join(dataDir, "PG_VERSION")).then(() => true, () => false)) return;
  const pglite = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const worker = new Worker(createInWorker, { eval: true, workerData: { pglite, dataDir } });
  await new Promise<void>((resolve, reject) => {
    worker.once("error", (error) => reject(new Error(`Creating the database in ${dataDir} failed: ${error.message}`)));
    worker.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`Creating the database in ${dataDir} failed (worker exit code ${code})`))));
  });
}
