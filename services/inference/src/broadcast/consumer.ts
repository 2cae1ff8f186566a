import type { Bus, Logger, Subscription } from "@switchyard/runtime";
import { broadcastRecord, type Completed } from "./span.js";
import type { Destination } from "./destinations.js";

/**
 * Sends each finished generation to every configured destination, from the event bus: a destination that
 * is down delays its deliveries (the event is redelivered with backoff) without touching requests.
 * Delivery is at least once; the record's `generation_id` (the OTLP span id is derived from it) lets a
 * receiver drop a repeat.
 */
export async function startBroadcast(bus: Bus, destinations: Destination[], logger: Logger, timeoutMs = 10_000): Promise<Subscription | undefined> {
  if (destinations.length === 0) return undefined;
  return bus.consume(
    "inference_broadcast",
    ["inference.generation.completed.v1"],
    async (event) => {
      const record = broadcastRecord(event as Completed);
      await Promise.all(
        destinations.map((d) =>
          d.send([record], AbortSignal.timeout(timeoutMs)).catch((error: unknown) => {
            logger.warn({ err: error, destination: d.name, generationId: record.generation_id }, "broadcast failed; it will be retried");
            throw error;
          }),
        ),
      );
    },
    { maxDeliveries: 10 },
  );
}
