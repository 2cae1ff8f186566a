import type { EventData, EventSubject } from "@switchyard/contracts";
import { enqueueEvent, type Queryable } from "@switchyard/runtime";
import { schema } from "./migrations.js";

/** Writes events into identity's outbox inside the caller's transaction, then nudges the relay. */
export interface EventSink {
  enqueue<S extends EventSubject>(tx: Queryable, subject: S, data: EventData<S>): Promise<void>;
  /** Called after commit so the relay publishes now instead of at its next poll. */
  committed(): void;
}

export function outboxSink(wake: () => void): EventSink {
  return {
    async enqueue(tx, subject, data) {
      await enqueueEvent(tx, schema, subject, data);
    },
    committed: wake,
  };
}
