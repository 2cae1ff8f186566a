import { createReadStream } from "node:fs";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { randomUUID } from "node:crypto";
import type { ObjectStore } from "./types.js";

/**
 * Objects as files under one folder; the content type sits beside each in `<file>.type`. Writes go to a
 * temporary name first and are renamed into place, so a crash never leaves half an object under its key.
 */
export function diskObjectStore(root: string): ObjectStore {
  const base = resolve(root);
  const pathOf = (key: string) => {
    const path = resolve(base, key);
    if (!path.startsWith(base + sep)) throw new Error(`object key escapes the store: ${key}`);
    return path;
  };
  return {
    kind: "disk",
    async put(key, body, contentType) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      const temporary = join(dirname(path), `.${randomUUID()}.partial`);
      await writeFile(temporary, body);
      await writeFile(`${path}.type`, contentType);
      await rename(temporary, path);
    },
    async get(key) {
      const path = pathOf(key);
      try {
        const info = await stat(path);
        const contentType = await readFile(`${path}.type`, "utf8").catch(() => "application/octet-stream");
        return { body: createReadStream(path), contentLength: info.size, contentType };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
    },
    async delete(key) {
      const path = pathOf(key);
      await rm(path, { force: true });
      await rm(`${path}.type`, { force: true });
    },
    async ping() {
      await mkdir(base, { recursive: true });
    },
  };
}
