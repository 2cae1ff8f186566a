import { createServer, type Server } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dockerAnswers, dockerEndpoint, needsContainers, planBackends } from "./backends.js";

const none = { databaseUrl: undefined, natsUrl: undefined, s3Endpoint: undefined };

describe("test backends", () => {
  it("take the environment first, containers when Docker answers, else the embedded defaults", () => {
    const env = { databaseUrl: "postgres://db", natsUrl: undefined, s3Endpoint: "http://s3" };
    expect(planBackends(env, true)).toEqual({ database: "environment", nats: "container", s3: "environment" });
    expect(planBackends(env, false)).toEqual({ database: "environment", nats: "embedded", s3: "environment" });
    expect(planBackends(none, true)).toEqual({ database: "container", nats: "container", s3: "container" });
    expect(needsContainers(planBackends(none, false))).toBe(false);
    expect(needsContainers(planBackends({ databaseUrl: "a", natsUrl: "b", s3Endpoint: "c" }, true))).toBe(false);
  });

  it("reach Docker by DOCKER_HOST or the default socket", () => {
    expect(dockerEndpoint(undefined)).toEqual({ socketPath: "/var/run/docker.sock" });
    expect(dockerEndpoint("unix:///run/user/1000/docker.sock")).toEqual({ socketPath: "/run/user/1000/docker.sock" });
    expect(dockerEndpoint("tcp://127.0.0.1:2376")).toEqual({ host: "127.0.0.1", port: 2376 });
  });

  describe("Docker's ping", () => {
    let server: Server | undefined;
    let dir: string | undefined;
    afterEach(async () => {
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
      if (dir) await rm(dir, { recursive: true, force: true });
      server = undefined;
      dir = undefined;
    });

    it("answers true for an engine on a socket and false for none", async () => {
      dir = await mkdtemp(join(tmpdir(), "switchyard-docker-"));
      const socket = join(dir, "docker.sock");
      expect(await dockerAnswers(`unix://${socket}`)).toBe(false);
      server = createServer((req, res) => res.writeHead(req.url === "/_ping" ? 200 : 404).end("OK"));
      await new Promise<void>((resolve) => server!.listen(socket, resolve));
      expect(await dockerAnswers(`unix://${socket}`)).toBe(true);
    });

    it("gives up on an engine that does not answer in time", async () => {
      server = createServer(() => {});
      await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
      const { port } = server.address() as { port: number };
      const started = Date.now();
      expect(await dockerAnswers(`tcp://127.0.0.1:${port}`, 200)).toBe(false);
      expect(Date.now() - started).toBeLessThan(5000);
      server.closeAllConnections();
    });
  });
});
