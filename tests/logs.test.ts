import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/** The standalone gateway's JSON log lines, as a log shipper reads them. */
let gw: TestGateway;
let logs = "";

beforeAll(async () => {
  const stream = new PassThrough();
  stream.on("data", (chunk: Buffer) => (logs += chunk.toString("utf8")));
  gw = await startTestGateway({}, { logs: stream });
  await gw.call("POST", "/keys", { body: { name: "logged" } });
});
afterAll(async () => {
  await gw?.stop();
});

describe("standalone logs", () => {
  it("name each line's service once: a JSON line never repeats a key", async () => {
    await eventually(async () => logs.includes("identity migrations applied"), 5000);
    const lines = logs.split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(5);
    const services = new Set<string>();
    for (const line of lines) {
      // JSON.parse keeps the last of repeated keys; a shipper may keep the first, or refuse the line.
      expect(line.match(/"service":/g) ?? [], line).toHaveLength(1);
      services.add((JSON.parse(line) as { service: string }).service);
    }
    expect([...services]).toEqual(expect.arrayContaining(["standalone", "identity", "catalog", "inference", "media"]));
  });
});
