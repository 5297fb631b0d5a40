import { createHash, randomBytes } from 'node:crypto';
import type { NotificationRequestedData, WorkspaceRole } from '@hwp/contracts';

/** A new invitation code: 256 random bits, base64url (43 characters, safe in a URL as is). */
export function newInvitationCode(): string {
  return randomBytes(32).toString('base64url');
}

/** What is stored and looked up: the hex sha256 of the code (a leaked table gives no usable code). */
export function hashInvitationCode(code: string): string {
  return createHash('sha256').update(code.trim(), 'utf8').digest('hex');
}

/** Where the browser app accepts invitations: `<base>/invite?code=<code>`. */
export function invitationLink(baseUrl: string, code: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/invite?code=${encodeURIComponent(code)}`;
}

/** One line of plain text: the sender's name goes into the subject, a single header line. */
function oneLine(text: string): string {
  return text
    .replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export interface InvitationMessageInput {
  to: string;
  code: string;
  link: string;
  workspace: string;
  role: WorkspaceRole;
  /** The signed-in sender's name as the collaboration host stores it (never request input). */
  invitedBy: string;
  /** The sender's address, shown beside the name so a look-alike display name gives itself away. */
  invitedByEmail: string;
  expiresAt: Date;
}

/** The `notification.requested.v1` payload of an invitation email (template `invitation`). */
export function invitationMessage(input: InvitationMessageInput): NotificationRequestedData {
  const invitedBy = oneLine(input.invitedBy) || 'A colleague';
  const address = oneLine(input.invitedByEmail);
  const sender = address ? `${invitedBy} (${address})` : invitedBy;
  const expiresAt = input.expiresAt.toISOString();
  return {
    channel: 'email',
    to: input.to,
    template: 'invitation',
    subject: `${invitedBy} invited you to the workspace ${input.workspace}`,
    text: [
      `${sender} invited you to join the workspace "${input.workspace}" as ${input.role}.`,
      '',
      `Accept the invitation: ${input.link}`,
      '',
      `Or enter this invitation code: ${input.code}`,
      '',
      `The invitation is for ${input.to}, can be used once, and expires at ${expiresAt}.`,
    ].join('\n'),
    vars: {
      workspace: input.workspace,
      role: input.role,
      invitedBy,
      invitedByEmail: address,
      link: input.link,
      code: input.code,
      expiresAt,
    },
  };
}
