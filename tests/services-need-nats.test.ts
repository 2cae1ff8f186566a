import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcess, type TestProcess } from "./support/process.js";

/**
 * A service run as its own process reaches the others' events, and they its, only over NATS: on the
 * in-process bus (standalone's) inference's and media's charges would reach no ledger and identity would
 * settle none, and catalog and storage would never hear of identity's deletions. Each refuses to start
 * without NATS_URL, as the router does.
 */
describe.each(["identity", "catalog", "storage", "inference", "media"])("%s as its own process without NATS_URL", (name) => {
  let dataDir: string;
  let proc: TestProcess | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), `switchyard-${name}-bus-`));
  });
  afterAll(async () => {
    await proc?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("refuses to start, saying why", async () => {
    proc = startProcess(`services/${name}/dist/main.js`, {
      PORT: "0",
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_INTERNAL_SECRET: randomBytes(32).toString("hex"),
      IDENTITY_URL: "http://127.0.0.1:9",
      CATALOG_URL: "http://127.0.0.1:9",
      LOG_FORMAT: "json",
    });
    await proc.waitFor(/needs NATS_URL/, 20_000);
    const exited = await new Promise<number | null>((resolve) => {
      if (proc!.child.exitCode !== null) return resolve(proc!.child.exitCode);
      proc!.child.once("exit", (code) => resolve(code));
    });
    expect(exited).toBe(1);
    expect(proc.output()).not.toMatch(/listening/i);
  });
});
