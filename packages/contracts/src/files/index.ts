/** Files of the API host (sections 2.4, 2.5): uploads, records, revisions and annotations. */
export * from './annotations.dto';
export * from './file-revisions.dto';
export * from './file-uploads.dto';
export * from './files.dto';
