import type { EndpointStatsEntry } from "@switchyard/contracts";
import { silentLogger } from "@switchyard/runtime";
import { describe, expect, it } from "vitest";
import { loadCatalogConfig } from "../config.js";
import { endpointStatsKey } from "@switchyard/upstream";
import { cachedEndpointStats } from "./endpoint-stats.js";

const entry = (provider: string, uptime: number): EndpointStatsEntry => ({
  provider,
  model: "v/m",
  latency_last_30m: null,
  throughput_last_30m: null,
  uptime_last_5m: uptime,
  uptime_last_30m: uptime,
  uptime_last_1d: uptime,
});
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("catalog's endpoint statistics", () => {
  it("keeps a service's last figures while it fails, and the other service's figures keep coming", async () => {
    let inference = 90;
    let mediaUp = true;
    const lookup = cachedEndpointStats(
      [async () => [entry("text", inference)], async () => (mediaUp ? [entry("voice", 80)] : Promise.reject(new Error("media is down")))],
      silentLogger(),
      { ttlMs: 0, waitMs: 200 },
    );
    expect((await lookup()).get(endpointStatsKey("voice", "v/m"))?.uptime_last_5m).toBe(80);
    mediaUp = false;
    inference = 95;
    const figures = await lookup();
    expect(figures.get(endpointStatsKey("text", "v/m"))?.uptime_last_5m).toBe(95);
    expect(figures.get(endpointStatsKey("voice", "v/m"))?.uptime_last_5m).toBe(80);
  });

  it("does not keep a listing waiting on a service that does not answer", async () => {
    let hang = false;
    const lookup = cachedEndpointStats([async () => (hang ? pause(5_000).then(() => [entry("text", 50)]) : [entry("text", 99)])], silentLogger(), { ttlMs: 0, waitMs: 100 });
    expect((await lookup()).get(endpointStatsKey("text", "v/m"))?.uptime_last_5m).toBe(99);
    hang = true;
    const started = Date.now();
    expect((await lookup()).get(endpointStatsKey("text", "v/m"))?.uptime_last_5m).toBe(99);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("takes inference's and media's URLs as the router does, one or a comma-separated list of replicas", () => {
    const config = loadCatalogConfig({ INFERENCE_URL: "http://inference-0:8083,http://inference-1:8083", MEDIA_URL: "http://media:8084" });
    expect([config.INFERENCE_URL, config.MEDIA_URL]).toEqual(["http://inference-0:8083", "http://media:8084"]);
    expect(loadCatalogConfig({}).INFERENCE_URL).toBeUndefined();
  });
});
