import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureCatalog } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { repoRoot, startProcess, type TestProcess } from "./support/process.js";

/** `npm start` on an empty data directory, as a newcomer meets it: its first key, and its first mistakes. */
let dataDir: string;
let catalogPath: string;
const running: TestProcess[] = [];
const keyLine = /^\s+(sk-sy-v1-[0-9a-f]{72})$/m;

const start = () => {
  const proc = startProcess("services/standalone/dist/main.js", { PORT: "0", SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_CONFIG: catalogPath });
  running.push(proc);
  return proc;
};
const exitOf = async (proc: TestProcess) => {
  await eventually(async () => proc.child.exitCode !== null, 40_000);
  return proc.child.exitCode;
};

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "switchyard-first-start-"));
  catalogPath = join(dataDir, "catalog.json");
});
afterAll(async () => {
  for (const proc of running) await proc.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("the first start", () => {
  it("refuses a bad catalog before making anything: its problems one per line, no stack trace, no key", async () => {
    await writeFile(catalogPath, JSON.stringify({ ...fixtureCatalog, models: [{ ...fixtureCatalog.models[0]!, context_length: -1 }] }));
    const refused = start();
    expect(await exitOf(refused)).toBe(1);
    const output = refused.output();
    expect(output).toMatch(/^Invalid catalog in .*catalog\.json:\n {2}models\.0\.context_length: .+$/m);
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toMatch(keyLine);

    // A bad variable, the same way.
    const badPort = startProcess("services/standalone/dist/main.js", { PORT: "eighty", SWITCHYARD_DATA_DIR: dataDir });
    running.push(badPort);
    expect(await exitOf(badPort)).toBe(1);
    expect(badPort.output()).toMatch(/^Invalid configuration:\n {2}PORT: .+\n$/);
  }, 60_000);

  it("makes and shows the management key once the catalog is fixed, and a new one when none is left", async () => {
    await writeFile(catalogPath, JSON.stringify(fixtureCatalog));
    const first = start();
    const key = (await first.waitFor(keyLine, 40_000))[1]!;
    const port = (await first.waitFor(/"port":(\d+)/, 20_000))[1];
    const current = await fetch(`http://127.0.0.1:${port}/api/v1/key`, { headers: { authorization: `Bearer ${key}` } });
    expect(current.status).toBe(200);
    // The only management key is disabled: nobody could manage this gateway again.
    const list = (await (await fetch(`http://127.0.0.1:${port}/api/v1/keys`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Array<{ hash: string }> };
    const own = list.data[0]!.hash;
    const disabled = await fetch(`http://127.0.0.1:${port}/api/v1/keys/${own}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ disabled: true }),
    });
    expect(disabled.status).toBe(200);
    expect(await first.stop()).toBe(0);

    const again = start();
    const recovered = (await again.waitFor(keyLine, 40_000))[1]!;
    expect(recovered).not.toBe(key);
    const againPort = (await again.waitFor(/"port":(\d+)/, 20_000))[1];
    expect((await fetch(`http://127.0.0.1:${againPort}/api/v1/keys`, { headers: { authorization: `Bearer ${recovered}` } })).status).toBe(200);
    expect(await again.stop()).toBe(0);

    // With a usable management key in place, a start shows none.
    const quiet = start();
    await quiet.waitFor(/"port":(\d+)/, 40_000);
    expect(quiet.output()).not.toMatch(keyLine);
  }, 120_000);
});

describe("npm run config:check", () => {
  const check = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ["services/catalog/dist/check.js", ...args], { cwd: repoRoot }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
    });

  it("says a catalog file is valid, or lists its problems and exits 1, without starting anything", async () => {
    const good = join(dataDir, "good.json");
    await writeFile(good, JSON.stringify(fixtureCatalog));
    expect(await check(good)).toEqual({ code: 0, stdout: `${good}: 4 providers, ${fixtureCatalog.models.length} models; valid\n`, stderr: "" });
    const bad = join(dataDir, "bad.json");
    await writeFile(bad, JSON.stringify({ ...fixtureCatalog, models: [{ ...fixtureCatalog.models[0]!, id: "no-vendor" }] }));
    const refused = await check(bad);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Invalid catalog in .*bad\.json:\n {2}models\.0\.id: .+\n$/);
    expect((await check()).stdout).toMatch(/^the default catalog: \d+ providers, \d+ models; valid\n$/);
  });
});
