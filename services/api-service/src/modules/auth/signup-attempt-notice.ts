import type { NotificationRequestedData } from '@hwp/contracts';

/**
 * What the owner of a confirmed address receives when someone signs up with it (template
 * `signup_attempt`): the signup itself answers as for a new address and changes nothing.
 */
export function signupAttemptNotice(channel: 'email' | 'sms', to: string): NotificationRequestedData {
  if (channel === 'sms') {
    return {
      channel,
      to,
      template: 'signup_attempt',
      text:
        'Someone tried to sign up with this number, which already has an account. Nothing changed. ' +
        'If it was you, sign in instead.',
    };
  }
  return {
    channel,
    to,
    template: 'signup_attempt',
    subject: 'Someone tried to sign up with your email address',
    text: [
      'Someone tried to create an account with this email address, which already has one.',
      'Nothing about your account has changed.',
      '',
      'If it was you, sign in instead, or reset your password if you have forgotten it.',
      'If it was not you, you can ignore this message.',
    ].join('\n'),
  };
}
