/** Design reviews, review tasks, templates and tasks of the collaboration host. */
export * from './reviews.dto';
export * from './tasks.dto';
export * from './workspace-reviews.dto';
