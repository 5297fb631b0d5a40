/** Design reviews, review tasks, templates and tasks of the collaboration host. */
export * from './reviews.dto';
