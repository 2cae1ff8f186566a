export type * from "./types.js";
export { createMemoryBus } from "./memory.js";
export { connectNatsBus, type NatsBusOptions } from "./nats.js";
export { subjectMatches } from "./subject-match.js";
export { outboxMigrations, enqueueEvent, outboxInsertion, startOutboxRelay, consumeOnce, outboxSink, type EventSink, type OutboxInsertion, type OutboxRelay, type OutboxRelayOptions } from "./outbox.js";
export { pruneOnce, type PruningOptions } from "./outbox-pruning.js";
