import { execFile } from "node:child_process";
import { access, constants, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureCatalog } from "./support/catalog-fixture.js";
import { testEnv } from "./support/config.js";
import { repoRoot, startProcess, type TestProcess } from "./support/process.js";

/**
 * The npm package (`apps/gateway`, `@switchyard/gateway`) as a newcomer meets it: `npm pack` of the built
 * package, installed from the tarball into an empty folder outside the repository (its dependencies come
 * from the npm registry, or npm's cache), then its `switchyard` command started there with no settings.
 */
const gatewayDir = join(repoRoot, "apps", "gateway");
const packageJson = JSON.parse(await readFile(join(gatewayDir, "package.json"), "utf8")) as {
  version: string;
  bin: Record<string, string>;
  engines: Record<string, string>;
  dependencies: Record<string, string>;
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const run = (file: string, args: string[], cwd: string, timeout = 120_000) =>
  new Promise<Run>((resolve) => {
    execFile(file, args, { cwd, timeout, env: { PATH: testEnv.path, ...testEnv.npm } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });

let work: string;
let app: string;
let bin: string;
let packed: Array<{ path: string }>;
let proc: TestProcess;
let base: string;
let managementKey: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "switchyard-package-"));
  const pack = await run("npm", ["pack", "--json", "--pack-destination", work], gatewayDir);
  expect(pack.code, pack.stderr).toBe(0);
  const [tarball] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packed = tarball!.files;
  app = join(work, "app");
  await mkdir(app);
  // --prefix: the empty folder is the project, whatever lies above it.
  const install = await run("npm", ["install", "--prefix", app, "--prefer-offline", "--no-audit", "--no-fund", join(work, tarball!.filename)], app);
  expect(install.code, install.stderr).toBe(0);
  bin = join(app, "node_modules", ".bin", "switchyard");
  proc = startProcess(bin, { PORT: "0", SWITCHYARD_DATA_DIR: join(work, "data"), LOG_FORMAT: "json" }, process.execPath, app);
  managementKey = (await proc.waitFor(/^\s+(sk-sy-v1-[0-9a-f]{72})$/m, 60_000))[1]!;
  base = `http://127.0.0.1:${(await proc.waitFor(/"port":(\d+)/, 30_000))[1]}`;
}, 240_000);

afterAll(async () => {
  if (proc) expect(await proc.stop()).toBe(0);
  if (work) await rm(work, { recursive: true, force: true });
});

describe("the npm package", () => {
  it("holds the bundled command, the console and the default catalog, and pins the lockfile's versions of what it imports", async () => {
    const paths = packed.map((file) => file.path).sort();
    expect(paths).toEqual(expect.arrayContaining(["package.json", "README.md", "dist/switchyard.js", "dist/default-catalog.yaml", "dist/console/index.html", "dist/console/app.js"]));
    expect(paths.filter((path) => !path.startsWith("dist/"))).toEqual(["README.md", "package.json"]);
    expect(packageJson.bin).toEqual({ switchyard: "dist/switchyard.js" });
    expect(packageJson.engines.node).toMatch(/^>=20/);
    // The versions the workspace's libraries run with, found where they resolve them (hoisted or their own).
    const lock = (JSON.parse(await readFile(join(repoRoot, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> }).packages;
    for (const [name, version] of Object.entries(packageJson.dependencies)) {
      const used = Object.entries(lock)
        .filter(([path]) => path === `node_modules/${name}` || new RegExp(`^(libs|services)/[^/]+/node_modules/${name.replace(".", "\\.")}$`).test(path))
        .map(([, entry]) => entry.version);
      expect(used, name).toContain(version);
    }
  });

  it("starts from an empty folder with the embedded defaults and prints the first management key", async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(proc.output().match(/sk-sy-v1-[0-9a-f]{72}/g)).toHaveLength(1);
    expect(proc.output()).toContain('"database":"pglite"');
  });

  it("answers the API with the shipped default catalog", async () => {
    const response = await fetch(`${base}/api/v1/models`, { headers: { authorization: `Bearer ${managementKey}` } });
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: Array<{ id: string }> };
    const shipped = await readFile(join(app, "node_modules", "@switchyard", "gateway", "dist", "default-catalog.yaml"), "utf8");
    expect(data.length).toBeGreaterThan(0);
    for (const model of data) expect(shipped).toContain(`id: ${model.id}`);
    expect((await fetch(`${base}/api/v1/key`, { headers: { authorization: `Bearer ${managementKey}` } })).status).toBe(200);
  });

  it("serves the console from the package's own files", async () => {
    const page = await fetch(`${base}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain("app.js");
    const script = await fetch(`${base}/console/app.js`);
    expect(script.status).toBe(200);
    expect((await script.text()).length).toBeGreaterThan(10_000);
  });

  it("checks catalog files: a good one passes, a bad one gets one line per problem and exit 1", async () => {
    await access(bin, constants.X_OK);
    const good = join(work, "good.json");
    await writeFile(good, JSON.stringify(fixtureCatalog));
    expect(await run(bin, ["config", "check", good], app)).toEqual({ code: 0, stdout: `${good}: 4 providers, ${fixtureCatalog.models.length} models; valid\n`, stderr: "" });
    const bad = join(work, "bad.yaml");
    const model = fixtureCatalog.models[0]!;
    await writeFile(bad, JSON.stringify({ ...fixtureCatalog, models: [{ ...model, id: "no-vendor", context_length: -1 }] }));
    const refused = await run(bin, ["config", "check", bad], app);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/^Invalid catalog in .*bad\.yaml:\n {2}models\.0\.id: .+\n {2}models\.0\.context_length: .+\n$/);
    expect((await run(bin, ["config", "check"], app)).stdout).toMatch(/^the default catalog: \d+ providers, \d+ models; valid\n$/);
  });

  it("prints its version and usage, and refuses an unknown command with exit 2", async () => {
    expect(await run(bin, ["--version"], app)).toEqual({ code: 0, stdout: `${packageJson.version}\n`, stderr: "" });
    const help = await run(bin, ["--help"], app);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: switchyard \[command\]\n[^]*config check \[file\]/);
    const unknown = await run(bin, ["serve"], app);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^switchyard: unknown command: serve\n/);
  });
});
