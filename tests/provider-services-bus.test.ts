import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcess, type TestProcess } from "./support/process.js";

/**
 * Inference and media run as their own processes charge through identity's ledger, which only NATS
 * reaches: on the in-process bus (standalone's) their charges would go nowhere and every request would be
 * free. They refuse to start without NATS_URL, as the router does.
 */
describe.each(["inference", "media"])("%s as its own process without NATS_URL", (name) => {
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
