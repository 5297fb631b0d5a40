import type { Bom, NotificationRequestedData } from '@hwp/contracts';
import { RoutingKeys } from '@hwp/contracts';
import { type Bus, currentContext } from '@hwp/platform';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { type Move, PAST } from '../parts';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import type { BomsRepository } from './boms.repository';

/**
 * Approval notifications by email (the API host's notifier, through the outbox): a submitted BOM
 * to the workspace's managers and owners, an approved or rejected one to whoever submitted it.
 */
export async function notifyApproval(
  bus: Bus,
  /** On the transaction of the move: the mails go out only if it commits. */
  repo: BomsRepository,
  access: WorkspaceScope,
  actor: CollabUserEntity,
  bom: Bom,
  move: Move,
): Promise<void> {
  if (move === 'edit') return;
  const what = `${bom.assemblyPartNumber} ${bom.type} BOM revision ${bom.revision}`;
  const recipients =
    move === 'submit' ? await repo.approverEmails(actor.id) : await repo.submitterEmails(bom.id, actor.id);
  const subject =
    move === 'submit'
      ? `${actor.username} asks for approval of ${what}`
      : `${what} was ${PAST[move]} by ${actor.username}`;
  for (const { email } of recipients) {
    const data: NotificationRequestedData = {
      channel: 'email',
      to: email,
      template: `bom.${PAST[move]}`,
      subject,
      text: [
        `${subject} in the workspace "${access.name}".`,
        ...(bom.rejectionReason && move === 'reject' ? ['', `Reason: ${bom.rejectionReason}`] : []),
      ].join('\n'),
      vars: { workspace: access.name, bomId: bom.id, revision: bom.revision, status: bom.status },
    };
    await bus.outbox.add(repo.manager, {
      type: RoutingKeys.notificationRequested,
      workspace: access.name,
      actor: actor.id,
      correlationId: currentContext()?.requestId,
      data,
    });
  }
}
