import type { Logger } from "../log.js";
import { metrics, serviceOf } from "../metrics.js";
import { otlpTracesBody, type OtlpSpan } from "./otlp.js";

export interface ExporterOptions {
  /** The whole URL spans are POSTed to (`…/v1/traces`). */
  url: string;
  headers: Readonly<Record<string, string>>;
  /** Most spans waiting; a span ended while it is full is dropped and counted. */
  maxQueue: number;
  /** Most spans per export request. */
  maxBatch: number;
  /** Longest wait before waiting spans are sent, in milliseconds. */
  intervalMs: number;
  /** Longest wait for one export request, in milliseconds. */
  timeoutMs: number;
  logger: Logger;
}

/** Where ended spans go: a bounded queue, sent in batches off the requests' path. */
export interface SpanExporter {
  /** Queues a span of `service`; never waits, never throws. */
  add(service: string, span: OtlpSpan): void;
  /** Sends everything queued now (one request per batch) and resolves when done. */
  flush(): Promise<void>;
  /** Stops the timer and sends what is queued. */
  stop(): Promise<void>;
  /** Spans queued and not sent yet. */
  readonly queued: number;
  /** Spans dropped since the start: a full queue or a failed export. */
  readonly dropped: number;
}

/**
 * Batches spans to an OTLP/HTTP JSON endpoint. A batch goes when the queue holds a batch's worth or every
 * `intervalMs`, one request at a time; a full queue drops new spans rather than grow or slow a request.
 * A failed export drops its batch (a collector that is down must not fill the memory of every process) and
 * is logged at most once per interval, with how many spans went since the last line.
 */
export function createExporter(options: ExporterOptions): SpanExporter {
  const { logger, maxQueue, maxBatch, intervalMs } = options;
  // The process's metrics label: standalone's one exporter serves every service.
  const service = serviceOf(logger);
  const headers = { "content-type": "application/json", ...options.headers };
  let queue: Array<{ service: string; span: OtlpSpan }> = [];
  let dropped = 0;
  let sending: Promise<void> | undefined;
  let lastWarning = 0;
  let unreported = 0;

  const drop = (count: number, reason: "queue_full" | "export_failed") => {
    dropped += count;
    metrics.traceSpansDropped.inc({ service, reason }, count);
  };

  const warn = (count: number, problem: string) => {
    unreported += count;
    const now = Date.now();
    if (now - lastWarning < intervalMs) return;
    logger.warn({ url: options.url, droppedSpans: unreported, problem }, "could not export spans; they are dropped");
    lastWarning = now;
    unreported = 0;
  };

  const sendBatch = async (batch: Array<{ service: string; span: OtlpSpan }>) => {
    const byService = new Map<string, OtlpSpan[]>();
    for (const { service, span } of batch) {
      const spans = byService.get(service);
      if (spans) spans.push(span);
      else byService.set(service, [span]);
    }
    try {
      const res = await fetch(options.url, {
        method: "POST",
        headers,
        body: JSON.stringify(otlpTracesBody(byService, "switchyard")),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) return void metrics.traceSpansExported.inc({ service }, batch.length);
      drop(batch.length, "export_failed");
      warn(batch.length, `the collector answered ${res.status}`);
    } catch (error) {
      drop(batch.length, "export_failed");
      warn(batch.length, (error as Error).message);
    }
  };

  /** Sends batches while a whole one waits (or, with `all`, until the queue is empty); one request at a time. */
  const pump = (all: boolean): Promise<void> => {
    if (sending) return sending;
    if (queue.length === 0) return Promise.resolve();
    const run = async () => {
      do {
        const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
        queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
        await sendBatch(batch);
      } while (queue.length > 0 && (all || queue.length >= maxBatch));
    };
    // Set before the first batch goes, cleared once the last has: a pump while one runs joins it.
    const running = run().finally(() => {
      sending = undefined;
    });
    sending = running;
    return running;
  };

  const timer = setInterval(() => void pump(false), intervalMs);
  timer.unref();

  return {
    add(service, span) {
      if (queue.length >= maxQueue) return drop(1, "queue_full");
      queue.push({ service, span });
      if (queue.length >= maxBatch && !sending) void pump(false);
    },
    async flush() {
      while (sending) await sending;
      await pump(true);
    },
    async stop() {
      clearInterval(timer);
      await this.flush();
    },
    get queued() {
      return queue.length;
    },
    get dropped() {
      return dropped;
    },
  };
}
