import { existsSync, readFileSync } from "node:fs";
import { catalogEnv } from "@switchyard/catalog";
import { identityEnv } from "@switchyard/identity";
import { inferenceEnv } from "@switchyard/inference";
import { mediaEnv } from "@switchyard/media";
import { routerEnv } from "@switchyard/router";
import { parseEnv } from "@switchyard/runtime";
import { storageEnv } from "@switchyard/storage";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { z } from "zod";
import { repoRoot } from "./support/process.js";

/**
 * compose.yaml, checked without a Docker engine (there is none here): the fields Compose knows, images built
 * from Dockerfiles that exist, every variable one the service's own configuration reads and accepts, every
 * service reached at a name and port that exist, health checks behind every wait, data on named volumes.
 */
interface Healthcheck {
  test: string[];
  interval: string;
  timeout: string;
  retries: number;
}
interface ComposeService {
  build?: { context: string; dockerfile: string };
  image: string;
  command?: string[];
  environment?: Record<string, string>;
  env_file?: Array<{ path: string; required: boolean }>;
  ports?: string[];
  depends_on?: Record<string, { condition: "service_started" | "service_healthy" }>;
  volumes?: string[];
  healthcheck?: Healthcheck;
  restart?: string;
}
interface Compose {
  name: string;
  services: Record<string, ComposeService>;
  volumes: Record<string, null>;
}

const text = readFileSync(`${repoRoot}compose.yaml`, "utf8");
const raw = parse(text, { merge: true }) as Record<string, unknown>;

/** Compose's interpolation: `${NAME}`, `${NAME:-default}`, `${NAME:?error}` (empty counts as unset), `$$`. */
function interpolate(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === "string") {
    return value.replace(/\$\$|\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (match, name: string | undefined, op: string | undefined, arg: string | undefined) => {
      if (!name) return "$";
      const set = vars[name];
      if (set) return set;
      if (op === "?") throw new Error(`${name}: ${arg}`);
      return op === "-" ? arg! : "";
    });
  }
  if (Array.isArray(value)) return value.map((item) => interpolate(item, vars));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolate(item, vars)]));
  return value;
}

const secrets = { SWITCHYARD_INTERNAL_SECRET: "a".repeat(64), SWITCHYARD_ENCRYPTION_KEY: "b".repeat(64) };
const compose = interpolate(raw, secrets) as Compose;
const { services } = compose;

/** Each Switchyard service and the schema of the variables it reads. */
const schemas: Record<string, z.ZodObject> = {
  router: routerEnv,
  identity: identityEnv,
  catalog: catalogEnv,
  inference: inferenceEnv,
  media: mediaEnv,
  storage: storageEnv,
};
/** Services that take providers' keys and base URLs from their environment (their config's providerEnv). */
const callProviders = ["catalog", "inference", "media", "storage"];
const backends = ["postgres", "nats", "s3"];

const dockerfileOf = (name: string) => readFileSync(`${repoRoot}${services[name]!.build!.dockerfile}`, "utf8");
const runtimeStage = (dockerfile: string) => dockerfile.split(/^FROM /m).at(-1)!;
/** The variables a service's image sets (`ENV A=1 B=2`), under those compose gives it. */
const imageEnv = (name: string) =>
  Object.fromEntries([...runtimeStage(dockerfileOf(name)).matchAll(/^ENV (.+)$/gm)].flatMap((m) => m[1]!.split(/\s+/).map((pair) => pair.split("=") as [string, string])));
const environmentOf = (name: string) => ({ ...imageEnv(name), ...services[name]!.environment });

describe("compose.yaml", () => {
  it("uses only fields of the Compose specification, at the places it allows them", () => {
    expect(Object.keys(raw).filter((key) => !key.startsWith("x-")).sort()).toEqual(["name", "services", "volumes"]);
    const serviceFields = ["build", "image", "command", "environment", "env_file", "ports", "depends_on", "volumes", "healthcheck", "restart"];
    for (const [name, service] of Object.entries(services)) {
      for (const key of Object.keys(service)) expect(serviceFields, `${name}.${key}`).toContain(key);
      expect(service.image, name).toMatch(/^[a-z0-9./-]+(:[\w.-]+)?$/);
      if (service.build) expect(Object.keys(service.build).sort()).toEqual(["context", "dockerfile"]);
      if (service.healthcheck) expect(Object.keys(service.healthcheck).sort(), name).toEqual(["interval", "retries", "test", "timeout"]);
      if (service.healthcheck) expect(service.healthcheck.test[0]).toBe("CMD");
      for (const [target, wait] of Object.entries(service.depends_on ?? {})) expect(Object.keys(wait), `${name} → ${target}`).toEqual(["condition"]);
      for (const file of service.env_file ?? []) expect(Object.keys(file).sort()).toEqual(["path", "required"]);
      for (const value of Object.values(service.environment ?? {})) expect(typeof value, name).toBe("string");
      expect(service.restart).toBe("unless-stopped");
    }
  });

  it("runs every service but the sandbox from its own Dockerfile, with Postgres, NATS JetStream and an S3 server", () => {
    expect(Object.keys(services).sort()).toEqual([...Object.keys(schemas), ...backends].sort());
    for (const name of Object.keys(schemas)) {
      const service = services[name]!;
      expect(service.build, name).toEqual({ context: ".", dockerfile: `services/${name}/Dockerfile` });
      expect(existsSync(`${repoRoot}services/${name}/Dockerfile`)).toBe(true);
      expect(service.image).toBe(`switchyard/${name}`);
      // The image runs this service (its whole command: tests/dockerfiles.test.ts).
      expect(runtimeStage(dockerfileOf(name))).toMatch(new RegExp(`^CMD \\["node", .*"services/${name}/dist/main\\.js"\\]$`, "m"));
    }
    expect(services.nats!.command).toEqual(expect.arrayContaining(["--jetstream", "--store_dir"]));
    expect(services.postgres!.image).toMatch(/^postgres:1[5-9]/);
  });

  it("refuses to start without the deployment's secrets", () => {
    expect(() => interpolate(raw, {})).toThrow(/SWITCHYARD_INTERNAL_SECRET/);
    expect(() => interpolate(raw, { SWITCHYARD_INTERNAL_SECRET: secrets.SWITCHYARD_INTERNAL_SECRET })).toThrow(/SWITCHYARD_ENCRYPTION_KEY/);
  });

  it("gives each service only variables its configuration reads, which it accepts, and providers' keys from an optional file", () => {
    for (const [name, schema] of Object.entries(schemas)) {
      const environment = environmentOf(name);
      const known = Object.keys(schema.shape);
      for (const variable of Object.keys(services[name]!.environment!)) expect(known, `${name}: ${variable}`).toContain(variable);
      const config = parseEnv(schema, environment) as Record<string, unknown>;
      expect(config.SWITCHYARD_INTERNAL_SECRET, name).toBe(secrets.SWITCHYARD_INTERNAL_SECRET);
      expect(config.HOST, name).toBe("0.0.0.0");
      expect(services[name]!.env_file ?? [], name).toEqual(callProviders.includes(name) ? [{ path: "switchyard.env", required: false }] : []);
    }
    // Trial secrets written beside compose.yaml stay out of the repository.
    const ignored = readFileSync(`${repoRoot}.gitignore`, "utf8").split("\n");
    expect(ignored).toEqual(expect.arrayContaining([".env", "switchyard.env"]));
  });

  it("listens where its image says, and reaches every service, Postgres, NATS and S3 at names and ports that exist", () => {
    const portOf = (name: string) => Number(environmentOf(name).PORT);
    for (const name of Object.keys(schemas)) expect(runtimeStage(dockerfileOf(name)), name).toContain(`EXPOSE ${portOf(name)}`);
    for (const name of Object.keys(schemas)) {
      const config = parseEnv(schemas[name]!, environmentOf(name)) as Record<string, unknown>;
      for (const [variable, value] of Object.entries(config).filter(([key]) => key.endsWith("_URL"))) {
        for (const url of (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === "string").map((v) => new URL(v))) {
          expect(Object.keys(services), `${name}: ${variable}`).toContain(url.hostname);
          if (url.protocol === "http:" && url.hostname in schemas) expect(Number(url.port), `${name}: ${variable}`).toBe(portOf(url.hostname));
        }
      }
      // No variable left on a default that means "this same machine", which inside a container is nothing.
      expect(JSON.stringify(config), name).not.toMatch(/127\.0\.0\.1|localhost/);
    }
    const router = parseEnv(routerEnv, environmentOf("router"));
    expect([router.IDENTITY_URL, router.CATALOG_URL, router.INFERENCE_URL, router.MEDIA_URL, router.STORAGE_URL].flat().map((u) => new URL(u).hostname)).toEqual(["identity", "catalog", "inference", "media", "storage"]);

    const database = new URL(environmentOf("identity").DATABASE_URL!);
    const postgres = services.postgres!.environment!;
    expect([database.hostname, database.port, database.username, database.password, database.pathname]).toEqual(["postgres", "5432", postgres.POSTGRES_USER, postgres.POSTGRES_PASSWORD, `/${postgres.POSTGRES_DB}`]);
    expect(new URL(environmentOf("router").NATS_URL!).host).toBe("nats:4222");
    const storage = environmentOf("storage");
    expect(new URL(storage.S3_ENDPOINT!).host).toBe(`s3:${/-s3\.port=(\d+)/.exec(services.s3!.command!.join(" "))![1]}`);
    expect([storage.S3_ACCESS_KEY_ID, storage.S3_SECRET_ACCESS_KEY]).toEqual([services.s3!.environment!.AWS_ACCESS_KEY_ID, services.s3!.environment!.AWS_SECRET_ACCESS_KEY]);
  });

  it("publishes only the router, on the host's loopback", () => {
    const published = Object.entries(services).filter(([, service]) => service.ports);
    expect(published.map(([name]) => name)).toEqual(["router"]);
    const [host, outside, inside] = services.router!.ports![0]!.split(":");
    expect([host, outside, Number(inside)]).toEqual(["127.0.0.1", "8080", Number(environmentOf("router").PORT)]);
  });

  it("waits on health checks that exist, without cycles, and keeps the backends' data on named volumes", () => {
    const healthy = (name: string) => Boolean(services[name]!.healthcheck) || (name in schemas && /^HEALTHCHECK /m.test(runtimeStage(dockerfileOf(name))));
    for (const name of Object.keys(services)) expect(healthy(name), name).toBe(true);
    for (const [name, service] of Object.entries(services)) {
      for (const [target, wait] of Object.entries(service.depends_on ?? {})) {
        expect(Object.keys(services), `${name} → ${target}`).toContain(target);
        expect(wait.condition).toBe("service_healthy");
      }
    }
    // Every service waits for Postgres and NATS; storage for S3; the router for every service it forwards to.
    for (const name of Object.keys(schemas)) expect(Object.keys(services[name]!.depends_on!), name).toEqual(expect.arrayContaining(["postgres", "nats"]));
    expect(Object.keys(services.storage!.depends_on!)).toContain("s3");
    expect(Object.keys(services.router!.depends_on!)).toEqual(expect.arrayContaining(["identity", "catalog", "inference", "media", "storage"]));
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (name: string) => {
      expect(visiting.has(name), `cycle through ${name}`).toBe(false);
      if (done.has(name)) return;
      visiting.add(name);
      for (const target of Object.keys(services[name]!.depends_on ?? {})) visit(target);
      visiting.delete(name);
      done.add(name);
    };
    for (const name of Object.keys(services)) visit(name);

    const mounted = Object.values(services).flatMap((service) => (service.volumes ?? []).map((volume) => volume.split(":")[0]!));
    expect(mounted.sort()).toEqual(Object.keys(compose.volumes).sort());
    for (const name of backends) expect(services[name]!.volumes, name).toHaveLength(1);
  });
});
