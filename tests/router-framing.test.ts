import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { rawConnection } from "./support/raw-socket.js";
import { startServiceProcesses, type ServiceProcesses } from "./support/service-processes.js";

let cluster: ServiceProcesses;

beforeAll(async () => {
  cluster = await startServiceProcesses(["catalog"], await catalogEnv());
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

describe("the router's framing of what it forwards", () => {
  it("never lets a client's Connection header unframe a body into a request of its own at the service", async () => {
    const smuggled = "GET /api/v1/zz-smuggled-marker HTTP/1.1\r\nHost: identity\r\n\r\n";
    const router = await rawConnection(Number(new URL(cluster.urls.router).port));
    await router.write(
      "GET /api/v1/key HTTP/1.1\r\nHost: gateway\r\n" +
        `Authorization: Bearer ${cluster.bootstrapKey}\r\nConnection: keep-alive, content-length\r\n` +
        `Content-Type: text/plain\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`,
    );
    expect(await router.until((text) => /\r\n\r\n\{.*\}/s.test(text), 10_000)).toMatch(/^HTTP\/1\.1 200/);
    // The next request on the router's connection to identity would be read after the smuggled one.
    const next = await fetch(`${cluster.apiUrl}/key`, { headers: { authorization: `Bearer ${cluster.bootstrapKey}` } });
    expect(next.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(cluster.processes.identity!.output()).not.toContain("zz-smuggled-marker");
    router.socket.destroy();
  });
});
