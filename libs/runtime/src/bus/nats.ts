import { eventDomain, parseEvent, type EventEnvelope } from "@switchyard/contracts";
import { JetStreamApiError, jetstream, jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import type { Logger } from "../log.js";
import { startDurableConsumer } from "./nats-consumer.js";
import { assertSubjectPattern } from "./subject-match.js";
import type { BatchHandler, Bus, ConsumeOptions, Subscription } from "./types.js";

/** Most events a batch consumer gets in one call: what arrived together, up to this. */
const maxBatch = 64;

export interface NatsBusOptions {
  url: string;
  /**
   * Prefix of wire subjects and stream/consumer names, so deployments and tests can share one NATS.
   * Envelopes keep the plain subject. Characters not allowed in a name become `_`.
   */
  namespace?: string | undefined;
  logger: Logger;
  /** Connection name shown by the server's monitoring. */
  name?: string;
}

const day = 24 * 60 * 60 * 1000;
const nanos = (ms: number) => ms * 1_000_000;
/** Stream and consumer names may not contain `.`, `*`, `>`, whitespace or path separators. */
const sanitize = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, "_");
/** The server's answer to adding a stream that exists with another configuration. */
const streamNameInUse = 10058;

/** Names on the wire for one namespace. */
export function natsNames(namespace = "") {
  const ns = sanitize(namespace);
  const durableBase = (name: string) => sanitize(ns ? `${ns}_${name}` : name);
  return {
    wire: (subject: string) => (ns ? `${ns}.${subject}` : subject),
    plain: (wire: string) => (ns && wire.startsWith(`${ns}.`) ? wire.slice(ns.length + 1) : wire),
    stream: (domain: string) => (ns ? `${ns}_` : "") + sanitize(domain).toUpperCase(),
    /** One durable per subject (NATS 2.9 has one filter per consumer), named after the subject so reordering is harmless. */
    durable: (name: string, subject: string, count: number) =>
      count === 1 ? durableBase(name) : `${durableBase(name)}-${sanitize(subject.replaceAll("*", "any").replaceAll(">", "all"))}`,
  };
}

/**
 * The event bus over NATS JetStream (server 2.9: one filter subject per consumer, no per-message TTL, no
 * batch publish). One stream per domain; `Nats-Msg-Id` = event id deduplicates republished outbox rows.
 */
export async function connectNatsBus(options: NatsBusOptions): Promise<Bus> {
  const { logger } = options;
  const names = natsNames(options.namespace);

  // Reconnect forever: a NATS outage must not take the gateway down; the outbox keeps events meanwhile.
  // No async traces: the client would capture a stack trace up front for every publish's acknowledgement
  // (a few percent of a busy process's CPU) only to decorate a timeout with it.
  const nc = await connect({ servers: options.url, name: options.name ?? "switchyard", maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  let connected = true;
  let parked = 0;
  const subscriptions = new Set<Subscription>();
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") {
        connected = false;
        logger.warn({ server: options.url }, "NATS disconnected");
      } else if (status.type === "reconnect") {
        connected = true;
        logger.info({ server: options.url }, "NATS reconnected");
      }
    }
  })();

  const createOrUpdateStream = async (domain: string): Promise<string> => {
    const name = names.stream(domain);
    const config = { subjects: [names.wire(`${domain}.>`)], max_age: nanos(7 * day), duplicate_window: nanos(120_000) };
    try {
      // Adding a stream that exists with the same configuration succeeds, so this is idempotent.
      await jsm.streams.add({ name, storage: StorageType.File, ...config });
    } catch (error) {
      if (!(error instanceof JetStreamApiError) || error.code !== streamNameInUse) throw error;
      await jsm.streams.update(name, config);
    }
    return name;
  };

  const streams = new Map<string, Promise<string>>();
  const ensureStream = (domain: string, fresh = false): Promise<string> => {
    let ready = fresh ? undefined : streams.get(domain);
    if (!ready) {
      ready = createOrUpdateStream(domain);
      const settled = ready;
      streams.set(domain, settled);
      settled.catch(() => {
        if (streams.get(domain) === settled) streams.delete(domain);
      });
    }
    return ready;
  };

  const track = (subscription: Subscription): Subscription => {
    subscriptions.add(subscription);
    return {
      async stop() {
        subscriptions.delete(subscription);
        await subscription.stop();
      },
    };
  };

  /** One durable consumer per subject; `batchSize` events at most go to the handler at once. */
  const consumeDurably = async (name: string, subjects: readonly string[], handler: BatchHandler, batchSize: number, consumeOptions?: ConsumeOptions) => {
    const maxDeliveries = consumeOptions?.maxDeliveries ?? 5;
    if (!Number.isInteger(maxDeliveries) || maxDeliveries < 1) throw new Error(`maxDeliveries must be a positive integer, got ${maxDeliveries}`);
    if (subjects.length === 0) throw new Error(`consumer ${name} needs at least one subject`);
    for (const subject of subjects) assertSubjectPattern(subject, true);
    const started: Subscription[] = [];
    try {
      for (const subject of subjects) {
        started.push(
          await startDurableConsumer({
            nc,
            js,
            jsm,
            logger,
            ensureStream: (fresh) => ensureStream(eventDomain(subject), fresh),
            consumer: name,
            durable: names.durable(name, subject, subjects.length),
            wireSubject: names.wire(subject),
            plainSubject: names.plain,
            handler,
            maxBatch: batchSize,
            maxDeliveries,
            onParked: () => void parked++,
          }),
        );
      }
    } catch (error) {
      await Promise.all(started.map((s) => s.stop()));
      throw error;
    }
    return track({ stop: async () => void (await Promise.all(started.map((s) => s.stop()))) });
  };

  // Envelopes arrive checked: the outbox checks an event when it is written and again when it is read back.
  const publishOne = async (event: EventEnvelope) => {
    const domain = eventDomain(event.subject);
    await ensureStream(domain);
    try {
      await js.publish(names.wire(event.subject), JSON.stringify(event), { msgID: event.id });
    } catch (error) {
      // The stream may be gone (a server back without its store); check it again next time.
      streams.delete(domain);
      throw error;
    }
  };

  const bus: Bus = {
    kind: "nats",
    publish: publishOne,

    /**
     * Sent together, without waiting for each acknowledgement before the next: they leave in one socket
     * write and arrive in order. If any fails the whole batch fails, to be sent again; the ones that did
     * arrive are dropped by the server as duplicates of their event id.
     */
    async publishAll(events) {
      const results = await Promise.allSettled(events.map(publishOne));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) throw failed.reason;
    },

    consume(name, subjects, handler, consumeOptions) {
      return consumeDurably(name, subjects, (events) => handler(events[0]!), 1, consumeOptions);
    },

    consumeBatches(name, subjects, handler, consumeOptions) {
      return consumeDurably(name, subjects, handler, maxBatch, consumeOptions);
    },

    async listen(subjects, handler) {
      for (const subject of subjects) assertSubjectPattern(subject, false);
      const inFlight = new Set<Promise<void>>();
      const deliver = (event: EventEnvelope) => {
        const running = Promise.resolve()
          .then(() => handler(event))
          .catch((error: unknown) => logger.warn({ err: error, subject: event.subject, eventId: event.id }, "event listener failed"))
          .finally(() => inFlight.delete(running));
        inFlight.add(running);
      };
      // Core subscriptions see JetStream publishes too: every process gets every event, from now on.
      const subs = subjects.map((subject) =>
        nc.subscribe(names.wire(subject), {
          callback: (error, msg) => {
            if (error) {
              logger.warn({ err: error, subject }, "event listener subscription failed");
              return;
            }
            let event: EventEnvelope;
            try {
              event = parseEvent(msg.json());
            } catch (parseError) {
              logger.warn({ err: parseError, subject: names.plain(msg.subject) }, "ignoring an event that does not parse");
              return;
            }
            deliver(event);
          },
        }),
      );
      // Once the server has the subscriptions, "from now on" holds for anything published after this resolves.
      await nc.flush();
      return track({
        async stop() {
          for (const sub of subs) sub.unsubscribe();
          await Promise.all(inFlight);
        },
      });
    },

    healthy: () => connected && !nc.isClosed(),
    parkedCount: () => parked,
    async close() {
      // Consumers first, so handlers under way can still ack before the connection goes.
      await Promise.all([...subscriptions].map((s) => s.stop()));
      subscriptions.clear();
      if (nc.isClosed()) return;
      // Draining needs the server; with NATS down, close at once rather than hang the shutdown.
      await (connected ? nc.drain() : nc.close());
    },
  };
  return bus;
}
