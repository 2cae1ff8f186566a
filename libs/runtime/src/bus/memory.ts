import { parseEvent, type EventEnvelope } from "@switchyard/contracts";
import type { Logger } from "../log.js";
import { assertSubjectPattern, subjectMatches } from "./subject-match.js";
import type { BatchHandler, Bus, ConsumeOptions, EventHandler, Subscription } from "./types.js";

interface Member {
  handle: BatchHandler;
  inFlight: Set<Promise<void>>;
}

interface Group {
  name: string;
  subjects: readonly string[];
  matches: (subject: string) => boolean;
  members: Member[];
  next: number;
  maxDeliveries: number;
  /** Takes the events of one `publishAll` together. */
  batches: boolean;
}

const backoffMs = (attempt: number) => Math.min(1000, 10 * 2 ** attempt);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a subject matches one of the patterns or more, remembered per subject (the subjects are a small closed set). */
function subjectFilter(patterns: readonly string[]): (subject: string) => boolean {
  const known = new Map<string, boolean>();
  return (subject) => {
    let matches = known.get(subject);
    if (matches === undefined) known.set(subject, (matches = patterns.some((p) => subjectMatches(p, subject))));
    return matches;
  };
}

/**
 * The in-process bus of the one-process deployment, with the NATS bus's guarantees: `publish` resolves
 * only after every durable consumer group has handled the event (or parked it), so the outbox marks a
 * row published only once its effects are done; a crash before that republishes it on restart.
 * Groups are the consumers registered when the event is published: there is no stream to replay. A
 * process whose relays start before all its consumers subscribe (standalone: identity's relay publishes
 * what a stopped gateway left in its outbox before catalog's and storage's consumers exist) opens it
 * `held`: what is published waits until `release`.
 */
export function createMemoryBus(options: { logger: Logger; held?: boolean }): Bus {
  const { logger } = options;
  let release = () => {};
  // Until the release, what publishes waits on this; after it, publishing no longer awaits a thing.
  let held = options.held
    ? new Promise<void>((resolve) => {
        release = () => {
          held = undefined;
          resolve();
        };
      })
    : undefined;
  const groups = new Map<string, Group>();
  const listeners = new Set<{ matches: (subject: string) => boolean; handler: EventHandler; inFlight: Set<Promise<void>> }>();
  const publishing = new Set<Promise<unknown>>();
  let parked = 0;
  let closed = false;

  const runTracked = (inFlight: Set<Promise<void>>, work: () => Promise<void>): Promise<void> => {
    const running = work().finally(() => inFlight.delete(running));
    inFlight.add(running);
    return running;
  };

  async function deliver(group: Group, event: EventEnvelope): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      // Round-robin per delivery, so a retry may land on another member, as with NATS.
      const member = group.members[group.next++ % group.members.length];
      if (!member) {
        logger.warn({ subject: event.subject, eventId: event.id, consumer: group.name }, "consumer stopped before the event was handled");
        return;
      }
      try {
        // Each delivery gets its own copy, as if it had crossed the wire.
        await runTracked(member.inFlight, () => member.handle([structuredClone(event)]));
        return;
      } catch (error) {
        if (attempt >= group.maxDeliveries) {
          parked++;
          logger.error(
            { err: error, subject: event.subject, eventId: event.id, consumer: group.name, deliveries: attempt },
            "event parked: given up after repeated failures",
          );
          return;
        }
        logger.warn({ err: error, subject: event.subject, eventId: event.id, consumer: group.name, deliveries: attempt }, "event handler failed; will redeliver");
        await sleep(backoffMs(attempt));
      }
    }
  }

  /** Events of one `publishAll` to one group, in order: together to a batch consumer, else one by one. */
  async function deliverAll(group: Group, events: EventEnvelope[]): Promise<void> {
    const member = group.batches && events.length > 1 ? group.members[group.next++ % group.members.length] : undefined;
    if (member) {
      try {
        await runTracked(member.inFlight, () => member.handle(structuredClone(events)));
        return;
      } catch (error) {
        // One bad event must not park the others: the batch is retried event by event.
        logger.warn({ err: error, consumer: group.name, events: events.length }, "batch handler failed; redelivering its events one by one");
      }
    }
    for (const event of events) await deliver(group, event);
  }

  /**
   * Validates as a consumer of NATS would, and starts the listeners (best-effort cache hints). Every
   * delivery gets its own copy, so nothing a handler does reaches the publisher or another handler.
   */
  function accept(event: EventEnvelope): EventEnvelope {
    const parsed = parseEvent(event);
    for (const listener of listeners) {
      if (!listener.matches(parsed.subject)) continue;
      void runTracked(listener.inFlight, async () => listener.handler(structuredClone(parsed))).catch((error: unknown) =>
        logger.warn({ err: error, subject: parsed.subject, eventId: parsed.id }, "event listener failed"),
      );
    }
    return parsed;
  }

  async function track(delivery: Promise<unknown>): Promise<void> {
    publishing.add(delivery);
    try {
      await delivery;
    } finally {
      publishing.delete(delivery);
    }
  }

  async function register(name: string, subjects: readonly string[], handle: BatchHandler, batches: boolean, consumeOptions?: ConsumeOptions): Promise<Subscription> {
    const maxDeliveries = consumeOptions?.maxDeliveries ?? 5;
    if (!Number.isInteger(maxDeliveries) || maxDeliveries < 1) throw new Error(`maxDeliveries must be a positive integer, got ${maxDeliveries}`);
    if (subjects.length === 0) throw new Error(`consumer ${name} needs at least one subject`);
    for (const subject of subjects) assertSubjectPattern(subject, true);
    let group = groups.get(name);
    if (!group) {
      group = { name, subjects: [...subjects], matches: subjectFilter(subjects), members: [], next: 0, maxDeliveries, batches };
      groups.set(name, group);
    } else if ([...group.subjects].sort().join(" ") !== [...subjects].sort().join(" ")) {
      throw new Error(`consumer ${name} is already registered for other subjects: ${group.subjects.join(", ")}`);
    }
    const member: Member = { handle, inFlight: new Set() };
    group.members.push(member);
    const owner = group;
    return {
      async stop() {
        owner.members = owner.members.filter((m) => m !== member);
        if (owner.members.length === 0 && groups.get(name) === owner) groups.delete(name);
        await Promise.allSettled(member.inFlight);
      },
    };
  }

  const bus: Bus = {
    kind: "memory",
    publish: (event) => bus.publishAll!([event]),

    async publishAll(events) {
      if (held) await held;
      if (closed) throw new Error("the in-process bus is closed");
      const parsed = events.map(accept);
      const deliveries = [...groups.values()].map((group) => {
        const matching = parsed.filter((e) => group.matches(e.subject));
        return matching.length ? deliverAll(group, matching) : undefined;
      });
      await track(Promise.all(deliveries));
    },

    consume: (name, subjects, handler: EventHandler, consumeOptions?: ConsumeOptions) =>
      register(name, subjects, async (events) => {
        for (const event of events) await handler(event);
      }, false, consumeOptions),

    consumeBatches: (name, subjects, handler, consumeOptions) => register(name, subjects, handler, true, consumeOptions),

    async listen(subjects, handler) {
      for (const subject of subjects) assertSubjectPattern(subject, false);
      const entry = { matches: subjectFilter(subjects), handler, inFlight: new Set<Promise<void>>() };
      listeners.add(entry);
      return {
        async stop() {
          listeners.delete(entry);
          await Promise.allSettled(entry.inFlight);
        },
      };
    },

    release: () => release(),
    healthy: () => !closed,
    parkedCount: () => parked,
    async close() {
      closed = true;
      // What waits for a release that never came fails, so its outbox rows stay for the next start.
      release();
      // Deliveries under way finish, so their outbox rows can be marked published.
      await Promise.allSettled(publishing);
      groups.clear();
      listeners.clear();
    },
  };
  return bus;
}
