import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The secret provider keys are sealed with: SWITCHYARD_ENCRYPTION_KEY, or, for an embedded database only, one
 * made on first start and kept beside it. With a shared database every replica must be given the same
 * secret, so none is invented: storing provider keys is then refused until it is set.
 */
export async function encryptionSecret(config: { SWITCHYARD_ENCRYPTION_KEY?: string | undefined; DATABASE_URL?: string | undefined; SWITCHYARD_DATA_DIR: string }): Promise<string | undefined> {
  if (config.SWITCHYARD_ENCRYPTION_KEY) return config.SWITCHYARD_ENCRYPTION_KEY;
  if (config.DATABASE_URL) return undefined;
  const path = join(config.SWITCHYARD_DATA_DIR, "encryption.key");
  try {
    return (await readFile(path, "utf8")).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const secret = randomBytes(32).toString("hex");
  await mkdir(config.SWITCHYARD_DATA_DIR, { recursive: true });
  await writeFile(path, secret, { mode: 0o600, flag: "wx" }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error;
  });
  return (await readFile(path, "utf8")).trim();
}
