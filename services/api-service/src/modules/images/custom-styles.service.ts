import type { CustomStyle, CustomStyleList } from '@hwp/contracts';
import { NotFoundError, newId } from '@hwp/platform';
import type { ResolvedTenant } from '../tenancy/tenant-context';
import { CustomStyleEntity } from './image.entities';
import type { ImageSources } from './image-sources';
import { paletteOf } from './local-engine';

function presentStyle(row: CustomStyleEntity): CustomStyle {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    reference_images: row.referenceImages,
    palette: row.palette,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
  };
}

/** Custom styles: a palette drawn from reference images, named, and used as prompt words by the tools. */
export class CustomStylesService {
  constructor(private readonly sources: ImageSources) {}

  /** A style's prompt words and its first reference image (for image-to-image), or 404. */
  async style(
    tenant: ResolvedTenant,
    userId: string,
    id: string,
  ): Promise<{ suffix: string; reference: Buffer | undefined }> {
    const row = await tenant.scope.repo(CustomStyleEntity).findOne({ id });
    if (!row) throw new NotFoundError('Style not found');
    const suffix = `in the style "${row.name}": ${row.description}; colour palette ${row.palette.join(', ')}`;
    const first = row.referenceImages[0];
    const reference = first
      ? await this.sources.source(tenant, userId, first, 'style_id', false).catch(() => undefined)
      : undefined;
    return { suffix, reference };
  }

  async createStyle(
    tenant: ResolvedTenant,
    userId: string,
    input: { name: string; description?: string; reference_images: string[] },
  ): Promise<CustomStyle> {
    const colours = new Map<string, number>();
    for (const reference of input.reference_images) {
      const bytes = await this.sources.source(tenant, userId, reference, 'reference_images', false);
      for (const [rank, hex] of (await paletteOf(bytes)).entries())
        colours.set(hex, (colours.get(hex) ?? 0) + 6 - rank);
    }
    const palette = [...colours]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([hex]) => hex);
    const row = await tenant.scope.repo(CustomStyleEntity).insert({
      id: newId(),
      name: input.name.trim(),
      description:
        input.description?.trim() ||
        `Palette ${palette.join(', ')} from ${input.reference_images.length} reference image(s)`,
      referenceImages: input.reference_images,
      palette,
      createdBy: userId,
      createdAt: new Date(),
    });
    return presentStyle(row);
  }

  async listStyles(tenant: ResolvedTenant): Promise<CustomStyleList> {
    const rows = await tenant.scope.repo(CustomStyleEntity).find({ order: { createdAt: 'DESC' } });
    return { items: rows.map(presentStyle) };
  }

  async getStyle(tenant: ResolvedTenant, id: string): Promise<CustomStyle> {
    const row = await tenant.scope.repo(CustomStyleEntity).findOne({ id });
    if (!row) throw new NotFoundError('Style not found');
    return presentStyle(row);
  }
}
