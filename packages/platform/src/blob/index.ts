import { FsBlobStore } from './fs-blob-store';
import type { S3BlobStore, S3BlobStoreOptions } from './s3-blob-store';

export {
  type BlobHead,
  BlobNotFoundError,
  type BlobStore,
  type ByteRange,
  type CompletedPart,
  DEFAULT_CONTENT_TYPE,
  type GetResult,
  InvalidBlobKeyError,
  type MultipartUpload,
  MultipartUploadNotFoundError,
  type PresignOptions,
  type PutOptions,
  type PutResult,
  RangeNotSatisfiableError,
  type ReadOptions,
} from './blob-store';
export { assertValidBlobKey } from './blob-validation';
export {
  FsBlobStore,
  type FsBlobStoreOptions,
  type FsPresignedCheck,
  type VerifyFsPresignedUrlOptions,
  verifyFsPresignedUrl,
} from './fs-blob-store';
export {
  createFsPresignedHandler,
  createFsPresignedMiddleware,
  type FsPresignedHandler,
  parseRangeHeader,
} from './fs-presigned-handler';
export { HashingStream } from './hashing-stream';
export type { S3BlobStore, S3BlobStoreOptions } from './s3-blob-store';

export interface BlobStoreConfig {
  /** When present, objects go to S3 (or an S3-compatible server); otherwise to `fsRoot`. */
  s3?: S3BlobStoreOptions;
  fsRoot: string;
  /** Where the filesystem driver's presigned URLs point (the mount of createFsPresignedHandler). */
  publicBaseUrl?: string;
  /** Signs the filesystem driver's presigned URLs. */
  signingKey: string;
}

/** Picks the driver from configuration; S3 callers may want `ensureBucket()` at startup. */
export function createBlobStore(config: BlobStoreConfig): S3BlobStore | FsBlobStore {
  if (config.s3) {
    // The AWS SDK is about 1.5 MB of JavaScript in some 100 modules: loaded only when S3 is used.
    const { S3BlobStore } = require('./s3-blob-store') as typeof import('./s3-blob-store');
    return new S3BlobStore(config.s3);
  }
  return new FsBlobStore({
    root: config.fsRoot,
    publicBaseUrl: config.publicBaseUrl,
    signingKey: config.signingKey,
  });
}
