import { pipeline } from 'node:stream/promises';
import { CadMetadata, ErrorBodyDto } from '@hwp/contracts';
import { type BlobStore, binaryResponse, NotFoundError } from '@hwp/platform';
import { previewPrefix } from '../file-processing';
import { type FileRouting, fileNotFound } from './file-routing';

export const cadMetadata = ({ fileRoute, files }: FileRouting) =>
  fileRoute({
    method: 'get',
    path: '/files/:file_id/cad-metadata',
    summary:
      'What processing read out of the current revision (dimensions, components, software, format facts)',
    description:
      'Values processing could not know are null (never guessed). Before processing ends, `processing_status` is ' +
      '`pending` or `processing` and the metadata is empty.',
    responses: { 200: { description: 'The metadata', schema: CadMetadata }, 404: fileNotFound },
    handler: async ({ params, user, tenant }) => {
      const userId = user.id;
      const { file, revision } = await files.open(tenant, userId, params.file_id);
      const format = (revision.metadata.custom_properties as { format?: unknown } | undefined)?.format;
      return {
        file_id: file.id,
        revision_id: revision.id,
        processing_status: revision.processingStatus,
        classification: revision.classification,
        format: typeof format === 'string' ? format : null,
        metadata: revision.metadata,
      };
    },
  });

/** `GET /files/{id}/preview` and `/thumbnail`: the PNG processing rendered, 404 until one exists. */
export const previewImage = (
  { fileRoute, files }: FileRouting,
  blobs: BlobStore,
  kind: 'preview' | 'thumbnail',
) =>
  fileRoute({
    method: 'get',
    path: `/files/:file_id/${kind}`,
    summary: kind === 'preview' ? 'Preview image (PNG, up to 512 px)' : 'Thumbnail (PNG, up to 128 px)',
    description:
      'Rendered by processing: images scaled down, meshes (STL, OBJ) shaded on the CPU. Other formats, and files ' +
      'not processed yet or quarantined, answer 404 with the error body.',
    responses: {
      200: binaryResponse('The image', 'image/png'),
      404: { description: 'No such file, or no image for it (yet)', schema: ErrorBodyDto },
    },
    handler: async ({ params, res, user, tenant }) => {
      const userId = user.id;
      const { revision } = await files.open(tenant, userId, params.file_id);
      const stored = (revision.stages.preview as Record<string, string> | undefined)?.[kind];
      // A revert's revision shares the images of the revision it copies: any of this tenant's previews.
      if (
        !stored ||
        revision.processingStatus === 'quarantined' ||
        !stored.startsWith(previewPrefix(tenant.id))
      ) {
        throw new NotFoundError(`No ${kind} for this file`);
      }
      const got = await blobs.get(stored);
      res.status(200).set({
        'Content-Type': 'image/png',
        'Content-Length': String(got.size),
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'private, max-age=300',
        ETag: `"${revision.sha256}-${kind}"`,
      });
      try {
        await pipeline(got.body, res);
      } catch {
        res.destroy();
      }
    },
  });
