import type { Logger } from "../log.js";
import type { TracingConfig } from "../config.js";
import { createExporter, type SpanExporter } from "./exporter.js";
import { otlpTracesUrl } from "./otlp.js";
import type { Sampler, Tracer } from "./spans.js";

/** The traces of one process: a tracer per service it runs, sharing one exporter. */
export interface Tracing {
  tracer(service: string): Tracer;
  exporter: SpanExporter;
  /** Sends the spans still queued; for a process's drain. */
  stop(): Promise<void>;
}

/** Whether a trace is recorded by the ratio samplers: the trace id's random low 56 bits against the ratio. */
const underRatio = (traceId: string, ratio: number) => ratio >= 1 || parseInt(traceId.slice(-14), 16) / 2 ** 56 < ratio;

export function samplerOf(name: TracingConfig["OTEL_TRACES_SAMPLER"], ratio: number): Sampler {
  switch (name) {
    case "always_on":
      return () => true;
    case "always_off":
      return () => false;
    case "traceidratio":
      return (_parent, traceId) => underRatio(traceId, ratio);
    case "parentbased_always_on":
      return (parent) => parent?.sampled ?? true;
    case "parentbased_always_off":
      return (parent) => parent?.sampled ?? false;
    case "parentbased_traceidratio":
      return (parent, traceId) => parent?.sampled ?? underRatio(traceId, ratio);
  }
}

/** The URL spans go to; undefined when no endpoint is set or traces are turned off. */
export function tracesUrlOf(config: TracingConfig): string | undefined {
  if (config.OTEL_SDK_DISABLED || config.OTEL_TRACES_EXPORTER === "none") return undefined;
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return config.OTEL_EXPORTER_OTLP_ENDPOINT ? otlpTracesUrl(config.OTEL_EXPORTER_OTLP_ENDPOINT) : undefined;
}

/**
 * The process's tracing as configured; undefined (no spans, no timer, no header rewritten) when no OTLP
 * endpoint is set. `OTEL_SERVICE_NAME`, when set, names every service of the process.
 */
export function createTracing(config: TracingConfig, logger: Logger): Tracing | undefined {
  const url = tracesUrlOf(config);
  if (!url) return undefined;
  const exporter = createExporter({
    url,
    headers: { ...config.OTEL_EXPORTER_OTLP_HEADERS, ...config.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    maxQueue: config.OTEL_BSP_MAX_QUEUE_SIZE,
    maxBatch: Math.min(config.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, config.OTEL_BSP_MAX_QUEUE_SIZE),
    intervalMs: config.OTEL_BSP_SCHEDULE_DELAY,
    timeoutMs: config.OTEL_BSP_EXPORT_TIMEOUT,
    logger,
  });
  const sampler = samplerOf(config.OTEL_TRACES_SAMPLER, config.OTEL_TRACES_SAMPLER_ARG);
  logger.info({ url, sampler: config.OTEL_TRACES_SAMPLER }, "exporting traces");
  return {
    tracer: (service) => ({ service: config.OTEL_SERVICE_NAME ?? service, exporter, sampler }),
    exporter,
    stop: () => exporter.stop(),
  };
}
