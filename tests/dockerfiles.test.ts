import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "./support/process.js";

/**
 * There is no Docker engine on the machines that run these tests, so the images are not built here; what
 * can be checked without one is: each Dockerfile copies only what exists once the workspace is built,
 * runs as a non-root user with a health check, and listens where its Kubernetes manifest says.
 */
const services = ["router", "identity", "catalog", "inference", "media", "storage", "sandbox"];

describe.each(services)("services/%s/Dockerfile", (service) => {
  const text = readFileSync(`${repoRoot}services/${service}/Dockerfile`, "utf8");
  const stages = text.split(/^FROM /m).slice(1);
  const runtime = stages.at(-1)!;

  it("builds in one stage and runs from a slim second stage, as a non-root user with a health check", () => {
    expect(stages).toHaveLength(2);
    expect(runtime).toMatch(/^node:20-bookworm-slim\n/);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\n\s+CMD \["node", "-e", .*\/healthz/m);
    expect(runtime).toContain(`CMD ["node", "services/${service}/dist/main.js"]`);
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
