/** Integration events (routing keys, envelopes, payloads and their checks), the SSE and WebSocket messages. */

export * from './collab-events';
export * from './event-payloads';
export * from './events';
export * from './notifications';
export * from './realtime';
