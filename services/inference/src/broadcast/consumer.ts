import type { Bus, Logger, Subscription } from "@switchyard/runtime";
import { broadcastRecord, broadcastSubjects, type Completed } from "./span.js";
import type { Destination } from "./destinations.js";

/**
 * Sends each finished generation (chat, embeddings, rerank, transcription, image, speech) of a workspace that enabled broadcast
 * (`is_observability_broadcast_enabled`) to every configured destination, from the
 * event bus: a destination that is down delays its own deliveries (the event is redelivered to it with
 * backoff) without touching requests or the other destinations. Each destination has its own durable
 * consumer (`inference_broadcast_<name>`), so one that fails never makes a healthy one receive an event
 * again. Delivery is at least once (a process can die between a send and its ack); the record's
 * `generation_id` (the OTLP span id is derived from it) lets a receiver drop a repeat.
 */
export async function startBroadcast(bus: Bus, destinations: Destination[], logger: Logger, timeoutMs = 10_000): Promise<Subscription | undefined> {
  if (destinations.length === 0) return undefined;
  const started: Subscription[] = [];
  try {
    for (const destination of destinations) {
      started.push(
        await bus.consume(
          `inference_broadcast_${destination.name}`,
          broadcastSubjects,
          async (event) => {
            // Only workspaces that turned broadcast on (`is_observability_broadcast_enabled`) send theirs.
            if ((event as Completed).data.broadcast !== true) return;
            const record = broadcastRecord(event as Completed);
            await destination.send([record], AbortSignal.timeout(timeoutMs)).catch((error: unknown) => {
              logger.warn({ err: error, destination: destination.name, generationId: record.generation_id }, "broadcast failed; it will be retried");
              throw error;
            });
          },
          { maxDeliveries: 10 },
        ),
      );
    }
  } catch (error) {
    await Promise.all(started.map((s) => s.stop()));
    throw error;
  }
  return { stop: async () => void (await Promise.all(started.map((s) => s.stop()))) };
}
