import { eventDomain, parseEvent, type EventEnvelope } from "@switchyard/contracts";
import { JetStreamApiError, jetstream, jetstreamManager, StorageType, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "../log.js";
import { metrics, serviceOf } from "../metrics.js";
import { connectInBackground, type BackgroundConnectOptions } from "./nats-connection.js";
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
  /** Backoff of the connection attempts while NATS has never answered (defaults: 250 ms doubling to 15 s). */
  retry?: Pick<BackgroundConnectOptions<unknown>, "initialDelayMs" | "maxDelayMs"> | undefined;
}

const day = 24 * 60 * 60 * 1000;
const nanos = (ms: number) => ms * 1_000_000;
/** Stream and consumer names may not contain `.`, `*`, `>`, whitespace or path separators. */
const sanitize = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, "_");
/** The server's answer to adding a stream that exists with another configuration. */
const streamNameInUse = 10058;
/** How long one connection attempt waits for an unresponsive server before it counts as failed. */
const connectTimeoutMs = 5_000;

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

interface NatsLink {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}
/** Subscribes on a connection; `deferred` when NATS answered only after the caller was given its subscription. */
type StartSubscription = (link: NatsLink, deferred: boolean) => Promise<Subscription>;

/**
 * The event bus over NATS JetStream (server 2.9: one filter subject per consumer, no per-message TTL, no
 * batch publish). One stream per domain; `Nats-Msg-Id` = event id deduplicates republished outbox rows.
 *
 * Resolves after one connection attempt whatever its outcome: with NATS unreachable the process starts
 * anyway, publishing fails at once (the outbox keeps the events), and consumers and listeners given to the
 * bus meanwhile are set up when a background attempt connects.
 */
export async function connectNatsBus(options: NatsBusOptions): Promise<Bus> {
  const { logger } = options;
  const names = natsNames(options.namespace);
  let connected = false;
  const busLabels = { service: serviceOf(logger) };
  // Disconnected until the first attempt connects: a scrape meanwhile must say so, not show nothing.
  metrics.busConnected.set(busLabels, 0);
  let parked = 0;
  const subscriptions = new Set<Subscription>();

  const watchStatus = async (nc: NatsConnection) => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") {
        connected = false;
        metrics.busConnected.set(busLabels, 0);
        logger.warn({ server: options.url }, "NATS disconnected");
      } else if (status.type === "reconnect") {
        connected = true;
        metrics.busConnected.set(busLabels, 1);
        logger.info({ server: options.url }, "NATS reconnected");
      }
    }
  };

  const link = connectInBackground<NatsLink>({
    logger,
    server: options.url,
    ...options.retry,
    async connect() {
      // Reconnect forever once connected: a NATS outage must not take the gateway down; the outbox keeps
      // events meanwhile. No async traces: the client would capture a stack trace up front for every
      // publish's acknowledgement (a few percent of a busy process's CPU) only to decorate a timeout with it.
      const nc = await connect({
        servers: options.url,
        name: options.name ?? "switchyard",
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        timeout: connectTimeoutMs,
        noAsyncTraces: true,
      });
      try {
        // Fails when the server runs without JetStream: retried like an unreachable server.
        const jsm = await jetstreamManager(nc);
        return { nc, js: jetstream(nc), jsm };
      } catch (error) {
        await nc.close();
        throw error;
      }
    },
  });
  void link.ready.then(({ nc }) => {
    connected = !nc.isClosed();
    metrics.busConnected.set(busLabels, connected ? 1 : 0);
    void watchStatus(nc);
  });
  // One attempt before resolving, so that with NATS up every consumer and listener is in place when the
  // caller's `await bus.consume(...)` returns, as before; with NATS down the attempt fails within moments.
  await link.firstAttempt;

  /** Runs `start` now if connected, else once connected; a subscription stopped first never starts. */
  const whenConnected = (start: StartSubscription): Subscription => {
    let stopped = false;
    let started: Promise<Subscription | undefined> | undefined;
    void link.ready.then((l) => {
      if (stopped) return;
      started = start(l, true).catch((error: unknown) => {
        logger.error({ err: error }, "could not subscribe after NATS connected");
        return undefined;
      });
    });
    return {
      // Not waiting for NATS: a subscription stopped before it answers is simply never made.
      async stop() {
        stopped = true;
        await (await started)?.stop();
      },
    };
  };

  /** Now when connected (so a failure is the caller's), else deferred. */
  const subscribe = async (start: StartSubscription): Promise<Subscription> => {
    const current = link.current();
    return track(current ? await start(current, false) : whenConnected(start));
  };

  /** The connection, or an error that the caller's retry (the outbox relay, a consumer's loop) absorbs. */
  const linked = (): NatsLink => {
    const current = link.current();
    if (!current) throw new Error(`NATS at ${options.url} has not answered yet`);
    return current;
  };

  const createOrUpdateStream = async (domain: string): Promise<string> => {
    const { jsm } = linked();
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
    // Set up now, the first setup's failure thrown to the caller; when deferred, in the consumer's retry loop.
    return subscribe(async ({ nc, js, jsm }, setupInLoop) => {
      const started: Subscription[] = [];
      try {
        for (const subject of subjects) {
          started.push(
            await startDurableConsumer({
              nc,
              js,
              jsm,
              logger,
              setupInLoop,
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
      return { stop: async () => void (await Promise.all(started.map((s) => s.stop()))) };
    });
  };

  // Envelopes arrive checked: the outbox checks an event when it is written and again when it is read back.
  const publishOne = async (event: EventEnvelope) => {
    const domain = eventDomain(event.subject);
    await ensureStream(domain);
    try {
      await linked().js.publish(names.wire(event.subject), JSON.stringify(event), { msgID: event.id });
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
      // Core subscriptions see JetStream publishes too: every process gets every event, from now on (from
      // when NATS first answers, for a listener given to the bus before that).
      return subscribe(async ({ nc }) => {
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
        return {
          async stop() {
            for (const sub of subs) sub.unsubscribe();
            await Promise.all(inFlight);
          },
        };
      });
    },

    healthy: () => connected && link.current()?.nc.isClosed() === false,
    parkedCount: () => parked,
    async close() {
      // A connection made as the bus closes is closed unused.
      await (await link.cancel())?.nc.close();
      // Consumers first, so handlers under way can still ack before the connection goes.
      await Promise.all([...subscriptions].map((s) => s.stop()));
      subscriptions.clear();
      const nc = link.current()?.nc;
      if (!nc || nc.isClosed()) return;
      // Draining needs the server; with NATS down, close at once rather than hang the shutdown.
      await (connected ? nc.drain() : nc.close());
    },
  };
  return bus;
}
