import { refused } from '../test-support/refused';
import { EventsQuery } from './collab-events';
import { ChannelFrame, ChatSendFrame, MAX_CHAT_TEXT } from './realtime';

describe('WebSocket frames', () => {
  test.each([
    ['files', true],
    ['image-operations', true],
    ['chat:general', true],
    ['chat:team_7-a', true],
    [`chat:${'r'.repeat(64)}`, true],
    [`chat:${'r'.repeat(65)}`, false],
    ['chat:', false],
    ['chat:General', false],
    ['chat:-general', false],
    ['chat:a b', false],
    ['filesx', false], // anchored: a known name is not a prefix
    ['xfiles', false],
    ['image-operations:other', false],
  ])('channel %s valid: %s', (channel, valid) => {
    expect(refused(ChannelFrame, { type: 'subscribe', channel })).toEqual(valid ? [] : ['channel']);
  });

  test('chat text: 1 to MAX_CHAT_TEXT characters in a room of the room pattern', () => {
    expect(refused(ChatSendFrame, { type: 'chat.send', room: 'general', text: 'hi' })).toEqual([]);
    expect(
      refused(ChatSendFrame, { type: 'chat.send', room: 'general', text: 'x'.repeat(MAX_CHAT_TEXT) }),
    ).toEqual([]);
    expect(
      refused(ChatSendFrame, { type: 'chat.send', room: 'general', text: 'x'.repeat(MAX_CHAT_TEXT + 1) }),
    ).toEqual(['text']);
    expect(refused(ChatSendFrame, { type: 'chat.send', room: 'general', text: '' })).toEqual(['text']);
    expect(refused(ChatSendFrame, { type: 'chat.send', room: 'chat:general', text: 'hi' })).toEqual(['room']);
    expect(refused(ChatSendFrame, { type: 'subscribe', room: 'general', text: 'hi' })).toEqual(['type']);
  });
});

describe('GET /v1/events (SSE)', () => {
  test.each([
    ['0', true],
    ['123456789012345', true],
    ['1234567890123456', false], // beyond a safe integer's digits
    ['-1', false],
    ['1.5', false],
    ['12a', false],
    ['', false],
  ])('lastEventId %s valid: %s', (lastEventId, valid) => {
    expect(refused(EventsQuery, { workspace: 'w', lastEventId }, 'query')).toEqual(
      valid ? [] : ['lastEventId'],
    );
  });
});
