import { eventProblem, isEventOf } from './event-payloads';
import { type EventEnvelope, RoutingKeys } from './events';

const envelope = (type: string, data: unknown): EventEnvelope => ({
  id: '01900000-0000-7000-8000-000000000000',
  type,
  version: 1,
  occurredAt: '2026-11-28T10:00:00.000Z',
  actor: 'system',
  data,
});

describe('event payload checks at a consumer edge', () => {
  test('a payload with every field its key promises passes, extra fields too', () => {
    const revoked = envelope(RoutingKeys.sessionRevoked, {
      session_ids: ['a', 'b'],
      user_id: 'u',
      exp: 1_900_000_000,
      reason: 'logout',
      extra: { added: 'later' },
    });
    expect(eventProblem(revoked, [RoutingKeys.sessionRevoked])).toBeNull();
    expect(isEventOf(revoked, [RoutingKeys.sessionRevoked, RoutingKeys.userUpdated])).toBe(true);
  });

  test('names the first field that is missing or of the wrong kind', () => {
    const keys = [RoutingKeys.fileProcessed] as const;
    const ok = { fileId: 'f', revisionId: 'r', status: 'ready', classification: null };
    expect(eventProblem(envelope(RoutingKeys.fileProcessed, ok), keys)).toBeNull();
    expect(eventProblem(envelope(RoutingKeys.fileProcessed, { ...ok, status: 'done' }), keys)).toBe(
      'file.processed.v1: data.status is missing or of the wrong kind',
    );
    expect(
      eventProblem(envelope(RoutingKeys.fileProcessed, { ...ok, classification: 'cad-3d' }), keys),
    ).toBeNull();
    expect(eventProblem(envelope(RoutingKeys.fileProcessed, { ...ok, fileId: undefined }), keys)).toMatch(
      /data\.fileId/,
    );
  });

  test('optional and nullable fields: absent or null where allowed, never of another kind', () => {
    const keys = [RoutingKeys.userUpdated] as const;
    const base = { userId: 'u', email: null, phone: '+14155550123' };
    expect(eventProblem(envelope(RoutingKeys.userUpdated, base), keys)).toBeNull();
    expect(eventProblem(envelope(RoutingKeys.userUpdated, { ...base, firstName: null }), keys)).toBeNull();
    expect(eventProblem(envelope(RoutingKeys.userUpdated, { ...base, firstName: 7 }), keys)).toMatch(
      /data\.firstName/,
    );
    // email is nullable but not optional: it must be there.
    expect(eventProblem(envelope(RoutingKeys.userUpdated, { userId: 'u', phone: null }), keys)).toMatch(
      /data\.email/,
    );
    const mail = { channel: 'email', to: 'a@b.test', template: 't', text: 'x' };
    const notify = [RoutingKeys.notificationRequested] as const;
    expect(
      eventProblem(envelope(RoutingKeys.notificationRequested, { ...mail, vars: { a: 'b' } }), notify),
    ).toBeNull();
    expect(
      eventProblem(envelope(RoutingKeys.notificationRequested, { ...mail, vars: { a: 1 } }), notify),
    ).toMatch(/data\.vars/);
  });

  test('nested shapes, lists, another type, and data that is not an object', () => {
    const keys = [RoutingKeys.collabEvent] as const;
    const event = {
      id: 3,
      type: 'update',
      workspace: 'w',
      actor: 'ann',
      at: '2026-11-28T10:00:00Z',
      data: {},
    };
    expect(eventProblem(envelope(RoutingKeys.collabEvent, { workspaceId: 'w1', event }), keys)).toBeNull();
    expect(
      eventProblem(
        envelope(RoutingKeys.collabEvent, { workspaceId: 'w1', event: { ...event, id: '3' } }),
        keys,
      ),
    ).toMatch(/data\.event/);
    expect(
      eventProblem(envelope(RoutingKeys.collabSessionEnded, { session_keys: ['a', 2] }), [
        RoutingKeys.collabSessionEnded,
      ]),
    ).toMatch(/data\.session_keys/);
    expect(eventProblem(envelope(RoutingKeys.userUpdated, { userId: 'u' }), keys)).toBe(
      'type user.updated.v1 is not one of collab.event.v1',
    );
    expect(eventProblem(envelope(RoutingKeys.collabEvent, [1, 2]), keys)).toBe(
      'collab.event.v1: data is not an object',
    );
    expect(eventProblem(envelope(RoutingKeys.collabEvent, null), keys)).toBe(
      'collab.event.v1: data is not an object',
    );
  });
});
