import { existsSync, readFileSync } from "node:fs";
import { parseEnv, serverNodeFlags } from "@switchyard/runtime";
import { standaloneEnv } from "@switchyard/standalone";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "./support/process.js";

/**
 * There is no Docker engine on the machines that run these tests, so the images are not built here; what
 * can be checked without one is: each Dockerfile copies only what exists once the workspace is built,
 * runs as a non-root user with a health check, and listens where its Kubernetes manifest says.
 */
const services = ["router", "identity", "catalog", "inference", "media", "storage", "sandbox"];

/** An image's command: Node with the server's V8 flags, on a service's entry point. */
const command = (service: string) => `CMD ${JSON.stringify(["node", ...serverNodeFlags, `services/${service}/dist/main.js`]).replaceAll(",", ", ")}`;

describe.each(services)("services/%s/Dockerfile", (service) => {
  const text = readFileSync(`${repoRoot}services/${service}/Dockerfile`, "utf8");
  const stages = text.split(/^FROM /m).slice(1);
  const runtime = stages.at(-1)!;

  it("builds in one stage and runs from a slim second stage, as a non-root user with a health check", () => {
    expect(stages).toHaveLength(2);
    expect(runtime).toMatch(/^node:24-bookworm-slim\n/);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\n\s+CMD \["node", "-e", .*\/healthz/m);
    expect(runtime).toContain(command(service));
  });

  it("copies into the image only paths that exist in the built workspace", () => {
    const sources = [...runtime.matchAll(/^COPY --from=build \/src\/(\S+) /gm)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThan(4);
    for (const source of sources) expect(existsSync(`${repoRoot}${source}`), source).toBe(true);
    expect(existsSync(`${repoRoot}services/${service}/dist/main.js`)).toBe(true);
    // Every workspace package the service depends on (a library, or the console the router serves) is in the image.
    const dependencies = Object.keys((JSON.parse(readFileSync(`${repoRoot}services/${service}/package.json`, "utf8")) as { dependencies: Record<string, string> }).dependencies);
    for (const name of dependencies.filter((d) => d.startsWith("@switchyard/")).map((d) => d.slice("@switchyard/".length))) {
      expect(sources).toContain(`${existsSync(`${repoRoot}libs/${name}`) ? "libs" : "apps"}/${name}/dist`);
    }
  });

  it("listens on the port its Kubernetes manifest gives it", () => {
    const port = /^ENV .*PORT=(\d+)/m.exec(runtime)?.[1];
    const manifests = parseAllDocuments(readFileSync(`${repoRoot}deploy/k8s/base/${service}.yaml`, "utf8")).map((d) => d.toJS() as { kind: string; spec: { ports?: Array<{ port: number }> } });
    expect(manifests.find((m) => m.kind === "Service")!.spec.ports![0]!.port).toBe(Number(port));
    expect(runtime).toContain(`EXPOSE ${port}`);
  });
});

describe("services/standalone/Dockerfile", () => {
  const runtime = readFileSync(`${repoRoot}services/standalone/Dockerfile`, "utf8").split(/^FROM /m).at(-1)!;
  const env = Object.fromEntries([...runtime.matchAll(/^ENV (.+)$/gm)].flatMap((m) => m[1]!.split(/\s+/).map((pair) => pair.split("=") as [string, string])));
  const manifest = (path: string) => JSON.parse(readFileSync(`${repoRoot}${path}/package.json`, "utf8")) as { dependencies?: Record<string, string> };
  const folderOf = (name: string) => ["libs", "apps", "services"].map((top) => `${top}/${name}`).find((path) => existsSync(`${repoRoot}${path}/package.json`))!;

  it("runs the whole gateway from a slim stage, as a non-root user with a health check", () => {
    expect(readFileSync(`${repoRoot}services/standalone/Dockerfile`, "utf8").split(/^FROM /m)).toHaveLength(3);
    expect(runtime).toMatch(/^node:24-bookworm-slim\n/);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\n\s+CMD \["node", "-e", .*\/healthz/m);
    expect(runtime).toContain(command("standalone"));
    expect(runtime).toContain(`EXPOSE ${env.PORT}`);
  });

  it("copies every workspace package standalone runs on, and the default catalog, from paths that exist", () => {
    const sources = [...runtime.matchAll(/^COPY --from=build \/src\/(\S+) /gm)].map((m) => m[1]!);
    for (const source of sources) expect(existsSync(`${repoRoot}${source}`), source).toBe(true);
    // Every @switchyard package reached from standalone's dependencies, the console the router serves included.
    const needed = new Set<string>();
    const walk = (path: string) => {
      for (const name of Object.keys(manifest(path).dependencies ?? {}).filter((d) => d.startsWith("@switchyard/"))) {
        const folder = folderOf(name.slice("@switchyard/".length));
        if (needed.has(folder)) continue;
        needed.add(folder);
        walk(folder);
      }
    };
    walk("services/standalone");
    needed.add("services/standalone");
    expect([...needed]).toEqual(expect.arrayContaining(["apps/console", "libs/runtime", "services/router", "services/sandbox"]));
    for (const folder of needed) expect(sources, folder).toEqual(expect.arrayContaining([`${folder}/package.json`, `${folder}/dist`]));
    expect(sources).toContain("services/catalog/default-catalog.yaml");
  });

  it("keeps its data in a volume the image's user owns, with settings standalone accepts", () => {
    expect(env.SWITCHYARD_DATA_DIR).toBe("/data");
    expect(runtime).toMatch(/^VOLUME \/data$/m);
    expect(runtime).toMatch(/^RUN mkdir \/data && chown node:node \/data$/m);
    expect(runtime.indexOf("chown node:node /data")).toBeLessThan(runtime.indexOf("USER node"));
    for (const name of Object.keys(env).filter((n) => n !== "NODE_ENV")) expect(Object.keys(standaloneEnv.shape), name).toContain(name);
    const config = parseEnv(standaloneEnv, env);
    expect([config.HOST, config.PORT, config.SANDBOX_RUNNER]).toEqual(["0.0.0.0", 8080, "off"]);
  });
});
