import { spawn } from "node:child_process";
import { access } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";

/**
 * The child's code: opening a data directory that has no cluster creates one; closing writes it out. The
 * embedded file system fails with an ErrnoError, which has a number and no message.
 */
const createInChild = `
const [pglite, dataDir] = process.argv.slice(1);
require(pglite).PGlite.create({ dataDir }).then((pg) => pg.close()).catch((error) => {
  const errno = error && error.name === "ErrnoError" ? "the file system refused (errno " + error.errno + "): is it a directory this user can write?" : "";
  process.stderr.write(String((error && error.message) || errno || error));
  process.exit(1);
});
`;

/** The last this many characters of the child's error output go into the error. */
const reportedChars = 500;

/**
 * Creates the database cluster in a data directory that has none, in a child process that then exits.
 * Creating a cluster grows PGlite's WebAssembly memory by a few hundred megabytes, which a WebAssembly
 * memory never gives back; in a worker thread much of it stayed with the process after the worker ended
 * (166 MB), where a process returns all of it to the system, so a first start holds little more memory
 * than every start after it.
 */
export async function createCluster(dataDir: string): Promise<void> {
  if (await access(join(dataDir, "PG_VERSION")).then(() => true, () => false)) return;
  const pglite = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const child = spawn(process.execPath, ["-e", createInChild, pglite, dataDir], { stdio: ["ignore", "ignore", "pipe"] });
  let errors = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    errors = (errors + chunk).slice(-reportedChars);
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (why: string) => reject(new Error(`Creating the database in ${dataDir} failed: ${why}`));
    child.once("error", (error) => failed(error.message));
    child.once("close", (code, signal) => (code === 0 ? resolve() : failed(errors.trim() || `exit code ${code ?? signal}`)));
  });
}
