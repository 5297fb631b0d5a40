import { defineFeature } from '@hwp/platform';
import type { ApiConfig } from '../../config';
import { notificationEntities, notificationMigrations } from './index';
import { createNotificationsModule, type NotificationsModule } from './notifications.service';

/** The notifier: email and SMS from `notification.requested.v1`, or the dev mailbox. */
export const notificationsFeature = defineFeature<ApiConfig, NotificationsModule>({
  name: 'notifications',
  entities: notificationEntities,
  migrations: notificationMigrations,
  build: (deps) => {
    const notifications = createNotificationsModule(deps);
    return {
      routes: [(api) => notifications.mount(api)],
      consumers: () => notifications.registerConsumer(),
      exports: notifications,
    };
  },
});
