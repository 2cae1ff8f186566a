import { parseEvent, type EventEnvelope } from "@switchyard/contracts";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, StorageType, type JsMsg } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import type { Logger } from "../log.js";
import type { Bus, ConsumeOptions, EventHandler, Subscription } from "./types.js";

export interface NatsBusOptions {
  url: string;
  /** Prefix of wire subjects and stream names, so deployments and tests can share one NATS. */
  namespace?: string | undefined;
  logger: Logger;
  name?: string;
}

const day = 24 * 60 * 60 * 1000;
const nanos = (ms: number) => ms * 1_000_000;
const backoffMs = (delivery: number) => Math.min(30_000, 250 * 2 ** delivery);
const sanitize = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, "_");

/**
 * The event bus over NATS JetStream (server 2.9: one filter subject per consumer, no per-message TTL).
 * One stream per domain; `Nats-Msg-Id` = event id deduplicates republished outbox rows.
 */
export async function connectNatsBus(options: NatsBusOptions): Promise<Bus> {
  const { logger } = options;
  const ns = options.namespace ? sanitize(options.namespace) : "";
  const wire = (subject: string) => (ns ? `${ns}.${subject}` : subject);
  const domainOf = (subject: string) => subject.split(".", 1)[0] ?? subject;
  const streamName = (domain: string) => sanitize(ns ? `${ns}_${domain}` : domain).toUpperCase();

  // Reconnect forever: a NATS outage must not take the gateway down; the outbox keeps events meanwhile.
  const nc = await connect({ servers: options.url, name: options.name ?? "switchyard", maxReconnectAttempts: -1, reconnectTimeWait: 500 });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  let connected = true;
  let parked = 0;
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

  const streams = new Map<string, Promise<string>>();
  const ensureStream = (domain: string): Promise<string> => {
    let ready = streams.get(domain);
    if (!ready) {
      const name = streamName(domain);
      const config = { name, subjects: [wire(`${domain}.>`)], storage: StorageType.File, max_age: nanos(7 * day), duplicate_window: nanos(120_000) };
      ready = jsm.streams.info(name).then(
        () => name,
        async () => {
          await jsm.streams.add(config).catch(async (error: unknown) => {
            // Another process may have created it first.
            await jsm.streams.info(name).catch(() => Promise.reject(error));
          });
          return name;
        },
      );
      ready.catch(() => streams.delete(domain));
      streams.set(domain, ready);
    }
    return ready;
  };

  const park = (msg: JsMsg, consumer: string, error: unknown, eventId?: string) => {
    parked++;
    logger.error({ err: error, subject: msg.subject, eventId, consumer, deliveries: msg.info.deliveryCount }, "event parked after repeated failures");
    msg.term("parked");
  };

  async function consumeOne(durable: string, subject: string, handler: EventHandler, maxDeliveries: number): Promise<Subscription> {
    const stream = await ensureStream(domainOf(subject));
    const config = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: wire(subject),
      ack_wait: nanos(30_000),
    };
    await jsm.consumers.add(stream, config).catch(() => jsm.consumers.update(stream, durable, { ack_wait: config.ack_wait }));
    const consumer = await js.consumers.get(stream, durable);
    const messages = await consumer.consume({ max_messages: 64 });
    const done = (async () => {
      for await (const msg of messages) {
        let event: EventEnvelope;
        try {
          event = parseEvent(msg.json());
        } catch (error) {
          park(msg, durable, error);
          continue;
        }
        try {
          await handler(event);
          msg.ack();
        } catch (error) {
          if (msg.info.deliveryCount >= maxDeliveries) park(msg, durable, error, event.id);
          else msg.nak(backoffMs(msg.info.deliveryCount));
        }
      }
    })();
    return {
      async stop() {
        await messages.close();
        await done;
      },
    };
  }

  return {
    kind: "nats",
    async publish(event) {
      await ensureStream(domainOf(event.subject));
      await js.publish(wire(event.subject), JSON.stringify(event), { msgID: event.id });
    },
    async consume(name, subjects, handler, consumeOptions?: ConsumeOptions) {
      const maxDeliveries = consumeOptions?.maxDeliveries ?? 5;
      const base = sanitize(ns ? `${ns}_${name}` : name);
      const subscriptions = await Promise.all(
        subjects.map((subject, i) => consumeOne(subjects.length > 1 ? `${base}_${i}` : base, subject, handler, maxDeliveries)),
      );
      return { stop: async () => void (await Promise.all(subscriptions.map((s) => s.stop()))) };
    },
    async listen(subjects, handler) {
      // Core subscriptions see JetStream publishes too: every process gets every event, from now on.
      const subs = subjects.map((subject) =>
        nc.subscribe(wire(subject), {
          callback: (error, msg) => {
            if (error) return;
            let event: EventEnvelope;
            try {
              event = parseEvent(msg.json());
            } catch (parseError) {
              logger.warn({ err: parseError, subject: msg.subject }, "ignoring an event that does not parse");
              return;
            }
            handler(event).catch((handlerError: unknown) => logger.warn({ err: handlerError, subject: event.subject }, "event listener failed"));
          },
        }),
      );
      // Once the server has the subscriptions, "from now on" holds for anything published after this resolves.
      await nc.flush();
      return {
        async stop() {
          for (const sub of subs) sub.unsubscribe();
        },
      };
    },
    healthy: () => connected && !nc.isClosed(),
    parkedCount: () => parked,
    async close() {
      if (!nc.isClosed()) await nc.drain();
    },
  };
}
