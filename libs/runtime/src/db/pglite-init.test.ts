import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPglite } from "./pglite.js";
import { createCluster } from "./pglite-init.js";

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "switchyard-pglite-init-"));
});
afterAll(() => rm(work, { recursive: true, force: true }));

const exists = (path: string) => access(path).then(() => true, () => false);

describe("the embedded database's first start", () => {
  it("creates the cluster of an empty data directory, which the process then opens and keeps", async () => {
    const dir = join(work, "fresh");
    await openPglite(dir).then(async (db) => {
      await db.query("CREATE TABLE kept (v int)");
      await db.query("INSERT INTO kept VALUES (7)");
      await db.close();
    });
    expect(await exists(join(dir, "PG_VERSION"))).toBe(true);
    const again = await openPglite(dir);
    expect(await again.query<{ v: number }>("SELECT v FROM kept")).toEqual([{ v: 7 }]);
    await again.close();
  }, 60_000);

  it("says where it could not create one", async () => {
    const file = join(work, "not-a-directory");
    await writeFile(file, "");
    await expect(createCluster(file)).rejects.toThrow(`Creating the database in ${file} failed: the file system refused (errno `);
  }, 60_000);

  it("runs with a 32 MB buffer pool", async () => {
    const db = await openPglite();
    expect(await db.query("SHOW shared_buffers")).toEqual([{ shared_buffers: "32MB" }]);
    await db.close();
  }, 60_000);
});
