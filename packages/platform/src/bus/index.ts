export { CreateBusTables1763700000000 } from './1763700000000-create-bus-tables';
export { CreateDeadLetters1763700000003 } from './1763700000003-CreateDeadLetters';
export {
  migrateWorkQueues,
  type WorkQueueMigrationOptions,
  type WorkQueueMigrationReport,
} from './amqp-queue-migration';
export { QueueMismatchError, type QueueType, workQueueArguments } from './amqp-topology';
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
  DEFAULT_HANDLER_TIMEOUT_MS,
  type EventHandler,
  type MessageTransport,
  newReplicaId,
  type OutgoingEvent,
  queueNameOf,
  RecentIds,
  type SubscribeOptions,
} from './bus';
export { busHealth } from './bus-health';
export { type Bus, type BusOptions, createBus } from './create-bus';
export { DeadLetterEntity } from './dead-letter.entity';
export { deadLetterTable } from './dead-letter-sink';
export { busEntities, InboxEntry, OutboxEntry } from './entities';
export { buildEnvelope, type DecodeResult, decodeEnvelope, isEventEnvelope, topicMatches } from './envelope';
export {
  claimInboxEntry,
  inboxHandler,
  type StagedHandler,
  subscribeStaged,
  subscribeWithInbox,
} from './inbox';
export { type BusLogger, describeError, guardLogger, silentLogger } from './logger';
export {
  type DeadLetter,
  type DeadLetterSink,
  MemoryBroker,
  MemoryTransport,
  type MemoryTransportOptions,
} from './memory-transport';
export { Outbox } from './outbox';
export {
  OutboxRelay,
  type OutboxRelayOptions,
  RelayBatchError,
  type RelayBatchResult,
  type RelayStatus,
} from './outbox-relay';
export { runHandler, TimeoutError, withDeadline } from './timeouts';
export { checkedEvent, InvalidEventError } from './typed-events';

import { CreateBusTables1763700000000 } from './1763700000000-create-bus-tables';
import { CreateDeadLetters1763700000003 } from './1763700000003-CreateDeadLetters';

/** Migrations of the bus tables, to spread into a service's migration list. */
export const busMigrations = [CreateBusTables1763700000000, CreateDeadLetters1763700000003];
