export { CreateBusTables1763700000000 } from './1763700000000-create-bus-tables';
export {
  AmqpTransport,
  type AmqpTransportOptions,
  ATTEMPT_HEADER,
  FAILED_AT_HEADER,
  LAST_ERROR_HEADER,
  ROUTING_KEY_HEADER,
  SOURCE_QUEUE_HEADER,
} from './amqp-transport';
export {
  broadcastQueueNameOf,
  type EventHandler,
  type MessageTransport,
  newReplicaId,
  type OutgoingEvent,
  queueNameOf,
  RecentIds,
  type SubscribeOptions,
} from './bus';
export { type Bus, type BusOptions, createBus } from './create-bus';
export { busEntities, InboxEntry, OutboxEntry } from './entities';
export { buildEnvelope, type DecodeResult, decodeEnvelope, isEventEnvelope, topicMatches } from './envelope';
export { claimInboxEntry, inboxHandler, subscribeWithInbox } from './inbox';
export { type BusLogger, describeError, silentLogger } from './logger';
export {
  type DeadLetter,
  MemoryBroker,
  MemoryTransport,
  type MemoryTransportOptions,
} from './memory-transport';
export { Outbox } from './outbox';
export { OutboxRelay, type OutboxRelayOptions, type RelayBatchResult } from './outbox-relay';

import { CreateBusTables1763700000000 } from './1763700000000-create-bus-tables';

/** Migrations of the bus tables, to spread into a service's migration list. */
export const busMigrations = [CreateBusTables1763700000000];
