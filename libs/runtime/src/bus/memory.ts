import type { EventEnvelope } from "@switchyard/contracts";
import type { Logger } from "../log.js";
import { subjectMatches } from "./subject-match.js";
import type { Bus, ConsumeOptions, EventHandler, Subscription } from "./types.js";

interface Group {
  name: string;
  subjects: readonly string[];
  members: EventHandler[];
  next: number;
  maxDeliveries: number;
}

const backoffMs = (attempt: number) => Math.min(1000, 10 * 2 ** attempt);

/**
 * The in-process bus of the one-process deployment, with the NATS bus's guarantees: `publish` resolves
 * only after every durable consumer group has handled the event (or parked it), so the outbox marks a
 * row published only once its effects are done; a crash before that republishes it on restart.
 */
export function createMemoryBus(options: { logger: Logger }): Bus {
  const groups = new Map<string, Group>();
  const listeners = new Set<{ subjects: readonly string[]; handler: EventHandler }>();
  let parked = 0;

  async function deliver(group: Group, event: EventEnvelope): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const member = group.members[group.next++ % group.members.length];
      if (!member) return;
      try {
        await member(event);
        return;
      } catch (error) {
        if (attempt >= group.maxDeliveries) {
          parked++;
          options.logger.error({ err: error, subject: event.subject, eventId: event.id, consumer: group.name }, "event parked after repeated failures");
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
      }
    }
  }

  return {
    kind: "memory",
    async publish(event) {
      for (const listener of listeners) {
        if (!listener.subjects.some((s) => subjectMatches(s, event.subject))) continue;
        listener.handler(event).catch((error: unknown) =>
          options.logger.warn({ err: error, subject: event.subject, eventId: event.id }, "event listener failed"),
        );
      }
      const matching = [...groups.values()].filter((g) => g.subjects.some((s) => subjectMatches(s, event.subject)));
      await Promise.all(matching.map((group) => deliver(group, event)));
    },
    async consume(name, subjects, handler, consumeOptions?: ConsumeOptions) {
      let group = groups.get(name);
      if (!group) {
        group = { name, subjects, members: [], next: 0, maxDeliveries: consumeOptions?.maxDeliveries ?? 5 };
        groups.set(name, group);
      }
      group.members.push(handler);
      const owner = group;
      return {
        async stop() {
          owner.members = owner.members.filter((m) => m !== handler);
          if (owner.members.length === 0) groups.delete(name);
        },
      } satisfies Subscription;
    },
    async listen(subjects, handler) {
      const entry = { subjects, handler };
      listeners.add(entry);
      return {
        async stop() {
          listeners.delete(entry);
        },
      };
    },
    healthy: () => true,
    parkedCount: () => parked,
    async close() {
      groups.clear();
      listeners.clear();
    },
  };
}
