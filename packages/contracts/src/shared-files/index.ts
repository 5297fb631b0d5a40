/** Shared files of the collaboration host: versions, branches, locks, conflicts and the trash. */
export * from './shared-files.dto';
