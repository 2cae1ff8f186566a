import type { EventEnvelope } from "@switchyard/contracts";

export interface Subscription {
  /** Stops delivery to this handler; in-flight handlers finish first. */
  stop(): Promise<void>;
}

export type EventHandler = (event: EventEnvelope) => Promise<void>;
/** Handles several events at once, in order; for effects that are much cheaper applied together. */
export type BatchHandler = (events: EventEnvelope[]) => Promise<void>;

export interface ConsumeOptions {
  /** Deliveries after which a failing event is parked (logged, counted) instead of retried. Default 5. */
  maxDeliveries?: number;
}

/**
 * The event bus. One interface over NATS JetStream and an in-process implementation with the same
 * delivery guarantees: at-least-once to durable consumers, effects made exactly-once by the consumer
 * (see `consumeOnce`), events recorded first in the producer's outbox.
 */
export interface Bus {
  readonly kind: "nats" | "memory";
  /**
   * Publishes one envelope, already checked against the registry (the outbox relay, which publishes every
   * event, parks rows that are not valid events); resolves once the transport holds it durably. `id`
   * deduplicates.
   */
  publish(event: EventEnvelope): Promise<void>;
  /**
   * Publishes envelopes in order, all or none: the in-process bus hands them to batch consumers together,
   * NATS sends them without waiting for each acknowledgement (a failed batch is sent again whole; ids
   * deduplicate). A bus without it gets them one `publish` at a time.
   */
  publishAll?(events: EventEnvelope[]): Promise<void>;
  /**
   * A durable consumer shared by every process that uses the same `name` (`<consumer>_<purpose>`):
   * each event reaches one of them, at least once; a handler that throws gets the event again later.
   */
  consume(name: string, subjects: readonly string[], handler: EventHandler, options?: ConsumeOptions): Promise<Subscription>;
  /**
   * `consume` for a handler that takes events in batches: as many as were published together (in process)
   * or had arrived together (NATS, up to 64). A batch that fails is handled again event by event, so a
   * poison event is parked alone.
   */
  consumeBatches(name: string, subjects: readonly string[], handler: BatchHandler, options?: ConsumeOptions): Promise<Subscription>;
  /** Broadcast to every process, from now on, without durability: for caches that only need to drop entries. */
  listen(subjects: readonly string[], handler: EventHandler): Promise<Subscription>;
  /**
   * Delivers what a bus opened held has kept, and all after it: called once every consumer of the process
   * has subscribed. A bus that keeps its events for consumers to come (NATS) has nothing to hold.
   */
  release?(): void;
  /** Whether the transport is reachable. */
  healthy(): boolean;
  /** Events given up on after `maxDeliveries` failed deliveries, since start (for metrics and alerts). */
  parkedCount(): number;
  close(): Promise<void>;
}
