import { parseEvent, type EventEnvelope } from "@switchyard/contracts";
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "../log.js";
import { metrics, serviceOf } from "../metrics.js";
import { wakeablePause } from "./pause.js";
import type { BatchHandler, Subscription } from "./types.js";

export interface DurableConsumerSpec {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  logger: Logger;
  /** Creates or updates the stream holding `wireSubject` and returns its name; `fresh` skips any cache. */
  ensureStream(fresh: boolean): Promise<string>;
  /** The name the caller gave `consume`, for log lines. */
  consumer: string;
  /** The JetStream durable name (namespaced, sanitised, one per subject). */
  durable: string;
  wireSubject: string;
  /** Maps a wire subject back to the plain event subject. */
  plainSubject(wire: string): string;
  /** Gets the events at hand together, up to `maxBatch` (1: one at a time). */
  handler: BatchHandler;
  maxBatch: number;
  maxDeliveries: number;
  onParked(): void;
  /** Set the consumer up in the retry loop instead of in the caller: for consumers deferred until NATS answers. */
  setupInLoop?: boolean;
}

const ackWaitMs = 30_000;
/** How often the backlog gauge asks the server: one small API call per consumer and process. */
const backlogPollMs = 5_000;
const nanos = (ms: number) => ms * 1_000_000;
const redeliveryDelayMs = (deliveries: number) => Math.min(30_000, 250 * 2 ** deliveries);
const restartDelayMs = (failures: number) => Math.min(10_000, 250 * 2 ** failures);
/** Notifications after which the consumer on the server is gone and must be made again. */
const lostConsumer = new Set(["consumer_deleted", "consumer_not_found", "stream_not_found"]);

const nextTurn = () => new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined)));

/**
 * The messages as batches of what has arrived: buffered messages come at once (microtasks), so a batch
 * ends when the next message is not there by the next turn of the event loop, or at `max`.
 */
async function* batches(messages: ConsumerMessages, max: number): AsyncGenerator<JsMsg[]> {
  const iterator = messages[Symbol.asyncIterator]();
  let batch: JsMsg[] = [];
  for (let next = iterator.next(); ; ) {
    let result = max > 1 && batch.length > 0 ? await Promise.race([next, nextTurn()]) : await next;
    if (result === undefined) {
      // Nothing more at hand: what there is goes now.
      yield batch;
      batch = [];
      result = await next;
    }
    if (result.done) break;
    batch.push(result.value);
    if (batch.length >= max) {
      yield batch;
      batch = [];
    }
    next = iterator.next();
  }
  if (batch.length > 0) yield batch;
}

/**
 * One durable pull consumer, kept alive: if its stream or consumer disappears (an operator deleted it, a
 * server came back without its store) it is recreated, so consumption resumes without a process restart.
 */
export async function startDurableConsumer(spec: DurableConsumerSpec): Promise<Subscription> {
  const { nc, logger } = spec;
  const service = serviceOf(logger);
  let stopped = false;
  let current: ConsumerMessages | undefined;
  const pause = wakeablePause();

  const ensureConsumer = async (fresh: boolean) => {
    const stream = await spec.ensureStream(fresh);
    const config = {
      durable_name: spec.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: spec.wireSubject,
      ack_wait: nanos(ackWaitMs),
    };
    await spec.jsm.consumers.add(stream, config).catch((error: unknown) => {
      // An existing consumer with an older configuration: bring its mutable fields up to date.
      if (!(error instanceof JetStreamApiError)) throw error;
      return spec.jsm.consumers.update(stream, spec.durable, { filter_subject: config.filter_subject, ack_wait: config.ack_wait });
    });
    return spec.js.consumers.get(stream, spec.durable);
  };

  const park = (msg: JsMsg, error: unknown, event?: EventEnvelope) => {
    spec.onParked();
    logger.error(
      {
        err: error,
        subject: event?.subject ?? spec.plainSubject(msg.subject),
        eventId: event?.id ?? msg.headers?.get("Nats-Msg-Id") ?? null,
        consumer: spec.consumer,
        durable: spec.durable,
        deliveries: msg.info.deliveryCount,
      },
      "event parked: given up after repeated failures",
    );
    msg.term("parked");
  };

  const handle = async (msg: JsMsg) => {
    let event: EventEnvelope;
    try {
      event = parseEvent(msg.json());
    } catch (error) {
      // It will never parse, so retrying would only loop.
      park(msg, error);
      return;
    }
    // A slow handler keeps its claim instead of the event going to another process mid-way.
    const keepAlive = setInterval(() => msg.working(), ackWaitMs / 3);
    try {
      await spec.handler([event]);
      msg.ack();
    } catch (error) {
      const deliveries = msg.info.deliveryCount;
      if (deliveries >= spec.maxDeliveries) {
        park(msg, error, event);
      } else {
        logger.warn({ err: error, subject: event.subject, eventId: event.id, consumer: spec.consumer, deliveries }, "event handler failed; will redeliver");
        msg.nak(redeliveryDelayMs(deliveries));
      }
    } finally {
      clearInterval(keepAlive);
    }
  };

  /**
   * Events that arrived together go to the handler together, which applies them far more cheaply than
   * one by one. A batch that fails is handled again event by event, so a poison event is parked alone
   * and the others still apply.
   */
  const handleBatch = async (msgs: JsMsg[]) => {
    if (msgs.length === 1) return handle(msgs[0]!);
    const parsed: Array<{ msg: JsMsg; event: EventEnvelope }> = [];
    for (const msg of msgs) {
      try {
        parsed.push({ msg, event: parseEvent(msg.json()) });
      } catch (error) {
        park(msg, error);
      }
    }
    if (parsed.length === 0) return;
    const keepAlive = setInterval(() => parsed.forEach(({ msg }) => msg.working()), ackWaitMs / 3);
    try {
      await spec.handler(parsed.map(({ event }) => event));
    } catch (error) {
      logger.warn({ err: error, consumer: spec.consumer, events: parsed.length }, "event batch failed; handling its events one by one");
      for (const { msg } of parsed) await handle(msg);
      return;
    } finally {
      clearInterval(keepAlive);
    }
    for (const { msg } of parsed) msg.ack();
  };

  const watch = async (messages: ConsumerMessages) => {
    for await (const status of messages.status()) {
      if (lostConsumer.has(status.type)) {
        logger.warn({ consumer: spec.consumer, durable: spec.durable, status: status.type }, "durable consumer lost; recreating it");
        await messages.close();
      }
    }
  };

  // The first setup runs in the caller so that a bad name or a server without JetStream fails loudly at
  // startup, unless the caller started while NATS was away: then it is the loop's, with its backoff.
  let consumer: Awaited<ReturnType<typeof ensureConsumer>> | undefined = spec.setupInLoop ? undefined : await ensureConsumer(false);

  /**
   * The backlog as the server counts it: not yet delivered (num_pending) plus delivered and not yet
   * acknowledged (num_ack_pending, events in handlers or waiting for redelivery). Polled rather than read
   * from acknowledged messages, so it also moves while nothing succeeds (a handler failing, a consumer
   * stuck), which is when it matters. One call at a time; a failed poll leaves the last figure.
   */
  let polling = false;
  const pollBacklog = async () => {
    if (polling || stopped || nc.isClosed()) return;
    polling = true;
    try {
      const info = await spec.jsm.consumers.info(await spec.ensureStream(false), spec.durable);
      metrics.consumerPending.set({ service, consumer: spec.durable }, info.num_pending + info.num_ack_pending);
    } catch {
      // NATS away or the consumer being recreated: the next poll tries again.
    } finally {
      polling = false;
    }
  };
  void pollBacklog();
  const backlog = setInterval(() => void pollBacklog(), backlogPollMs);
  backlog.unref();

  const loop = (async () => {
    for (let failures = 0; !stopped && !nc.isClosed(); ) {
      try {
        consumer ??= await ensureConsumer(true);
        // A small buffer: a message waiting here behind slow handlers could outlive its ack wait.
        const messages = await consumer.consume({ max_messages: Math.max(16, spec.maxBatch) });
        current = messages;
        if (stopped) await messages.close();
        void watch(messages).catch(() => undefined);
        for await (const msgs of batches(messages, spec.maxBatch)) {
          // Messages still buffered at stop go back to the server at once, for the processes that remain.
          if (stopped) {
            msgs.forEach((msg) => msg.nak());
            continue;
          }
          await handleBatch(msgs);
          failures = 0;
        }
      } catch (error) {
        if (!stopped && !nc.isClosed()) logger.warn({ err: error, consumer: spec.consumer, durable: spec.durable }, "durable consumer failed; restarting it");
      }
      consumer = undefined;
      if (stopped || nc.isClosed()) break;
      await pause.sleep(restartDelayMs(failures++));
    }
  })();

  return {
    async stop() {
      stopped = true;
      clearInterval(backlog);
      pause.wake();
      await current?.close();
      await loop;
    },
  };
}
