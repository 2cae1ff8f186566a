import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeCollector, type FakeCollector } from "../../../../tests/support/fake-collector.js";
import { createLogger, silentLogger } from "../log.js";
import { createExporter, type ExporterOptions } from "./exporter.js";
import { spanKind, type OtlpSpan } from "./otlp.js";

const span = (n: number): OtlpSpan => ({
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: (n + 1).toString(16).padStart(16, "0"),
  name: `span ${n}`,
  kind: spanKind.server,
  startTimeUnixNano: "1700000000000000000",
  endTimeUnixNano: "1700000000001000000",
  attributes: [],
});

let collector: FakeCollector | undefined;
afterEach(async () => {
  await collector?.stop();
  collector = undefined;
});

const options = (url: string, overrides: Partial<ExporterOptions> = {}): ExporterOptions => ({
  url: `${url}/v1/traces`,
  headers: { "x-tenant": "acme" },
  maxQueue: 100,
  maxBatch: 3,
  intervalMs: 60_000,
  timeoutMs: 5_000,
  logger: silentLogger(),
  ...overrides,
});

describe("span exporter", () => {
  it("sends batches no larger than the batch size, grouped by service, with the configured headers", async () => {
    collector = await startFakeCollector();
    const exporter = createExporter(options(collector.url));
    for (let n = 0; n < 7; n++) exporter.add(n % 2 ? "router" : "inference", span(n));
    await exporter.stop();
    expect(collector.exports.map((e) => e.spans).reduce((a, b) => a + b, 0)).toBe(7);
    expect(Math.max(...collector.exports.map((e) => e.spans))).toBeLessThanOrEqual(3);
    expect(collector.exports.every((e) => e.path === "/v1/traces" && e.headers["x-tenant"] === "acme" && e.headers["content-type"] === "application/json")).toBe(true);
    expect(collector.spans.filter((s) => s.service === "router").map((s) => s.name).sort()).toEqual(["span 1", "span 3", "span 5"]);
    expect(exporter.dropped).toBe(0);
  });

  it("sends what waits once the interval passes, without being asked", async () => {
    collector = await startFakeCollector();
    const exporter = createExporter(options(collector.url, { intervalMs: 50 }));
    exporter.add("router", span(1));
    const deadline = Date.now() + 5_000;
    while (collector.spans.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(collector.spans.map((s) => s.name)).toEqual(["span 1"]);
    await exporter.stop();
  });

  it("drops and counts new spans while its queue is full, never waiting on a stalled collector", async () => {
    collector = await startFakeCollector();
    const release = collector.hold();
    const exporter = createExporter(options(collector.url, { maxQueue: 5, maxBatch: 2 }));
    // The first two fill a batch, which goes at once and stalls at the collector.
    exporter.add("router", span(0));
    exporter.add("router", span(1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    for (let n = 2; n < 12; n++) exporter.add("router", span(n));
    // Ten spans queued or dropped in well under the time one export takes: adding never waits.
    expect(performance.now() - started).toBeLessThan(50);
    expect(exporter.queued).toBe(5);
    expect(exporter.dropped).toBe(5);
    release();
    await exporter.stop();
    expect(collector.spans.map((s) => s.name)).toEqual(["span 0", "span 1", "span 2", "span 3", "span 4", "span 5", "span 6"]);
    expect(exporter.queued).toBe(0);
  });

  it("drops a batch the collector refuses and says so once per interval", async () => {
    collector = await startFakeCollector();
    collector.answer = 503;
    const lines = new PassThrough();
    const logged: string[] = [];
    lines.on("data", (chunk: Buffer) => logged.push(...chunk.toString("utf8").split("\n").filter(Boolean)));
    const exporter = createExporter(options(collector.url, { logger: createLogger({ destination: lines }) }));
    for (let round = 0; round < 3; round++) {
      exporter.add("router", span(round));
      await exporter.flush();
    }
    expect(exporter.dropped).toBe(3);
    const warnings = logged.map((line) => JSON.parse(line) as { msg: string; problem?: string }).filter((line) => line.msg.startsWith("could not export spans"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.problem).toContain("503");
    await exporter.stop();
  });

  it("keeps sending after intervals with nothing to send, and stops at once when empty", async () => {
    collector = await startFakeCollector();
    const exporter = createExporter(options(collector.url, { intervalMs: 20 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    exporter.add("router", span(1));
    const deadline = Date.now() + 5_000;
    while (collector.spans.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(collector.spans).toHaveLength(1);
    await exporter.stop();
    await exporter.stop();
    expect(exporter.queued).toBe(0);
  });

  it("drops a batch it cannot deliver at all and goes on", async () => {
    collector = await startFakeCollector();
    const url = collector.url;
    await collector.stop();
    collector = undefined;
    const exporter = createExporter(options(url));
    exporter.add("router", span(0));
    await exporter.flush();
    expect(exporter.dropped).toBe(1);
    expect(exporter.queued).toBe(0);
    await exporter.stop();
  });
});
