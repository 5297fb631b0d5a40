/** Shared files of the collaboration host: versions, branches, locks, conflicts, the trash and signed URLs. */
export * from './file-branches.dto';
export * from './file-conflicts.dto';
export * from './file-history.dto';
export * from './file-locks.dto';
export * from './shared-files.dto';
export * from './signed-urls.dto';
