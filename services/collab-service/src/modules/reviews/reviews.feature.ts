import { defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import type { EventsModule } from '../events/events.module';
import type { SharedFilesExports } from '../shared-files/shared-files.feature';
import type { WorkspaceAccessExports } from '../workspace-access/workspace-access.feature';
import { DueSoonScanner } from './due-soon';
import { CreateReviews1764300000000 } from './migrations/1764300000000-CreateReviews';
import { DueSoonNotices1764300000100 } from './migrations/1764300000100-DueSoonNotices';
import { StatsIndexes1764300000200 } from './migrations/1764300000200-StatsIndexes';
import { reviewEntities } from './review.entity';
import { ReviewsService } from './reviews.service';
import {
  addReviewTask,
  createReview,
  createTask,
  createTemplate,
  deleteTask,
  deleteTemplate,
  listReviews,
  listTasks,
  listTemplates,
  moveReviewTask,
  updateReview,
  updateTask,
  workspaceReviews,
  workspaceStats,
  workspaceTasks,
} from './routes/reviews.routes';
import { TasksService } from './tasks.service';

export interface ReviewsExports {
  reviews: ReviewsService;
  tasks: TasksService;
  dueSoon: DueSoonScanner;
}

/** Design reviews, review templates, tasks and the workspace analytics (section 4.11). */
export const reviewsFeature = defineFeature<
  CollabConfig,
  ReviewsExports,
  { events: EventsModule; 'workspace-access': WorkspaceAccessExports; 'shared-files': SharedFilesExports }
>({
  name: 'reviews',
  entities: reviewEntities,
  migrations: [CreateReviews1764300000000, DueSoonNotices1764300000100, StatsIndexes1764300000200],
  build: (
    { dataSource, bus, config, logger },
    { events, 'workspace-access': access, 'shared-files': shared },
  ) => {
    const reviews = new ReviewsService(dataSource, events.events, bus);
    const tasks = new TasksService(dataSource, events.events, bus, reviews);
    const dueSoon = new DueSoonScanner(dataSource, events.events, bus, logger.child({ module: 'due-soon' }), {
      withinHours: config.DUE_SOON_HOURS,
      everyMs: config.DUE_SCAN_MS,
    });
    dueSoon.start();
    shared.files.addTimelineSource('task', (scope, path) => tasks.timeline(scope, path));
    return {
      routes: access.routes([
        listReviews(reviews),
        createReview(reviews),
        updateReview(reviews),
        addReviewTask(reviews),
        moveReviewTask(reviews),
        listTasks(tasks),
        createTask(tasks),
        updateTask(tasks),
        deleteTask(tasks),
        workspaceStats(tasks),
        workspaceReviews(tasks),
        workspaceTasks(tasks),
        listTemplates(reviews),
        createTemplate(reviews),
        deleteTemplate(reviews),
      ]),
      exports: { reviews, tasks, dueSoon },
    };
  },
});
