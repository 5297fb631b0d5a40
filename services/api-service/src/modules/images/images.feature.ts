import { defineFeature } from '@hwp/platform';
import type { ApiConfig } from '../../config';
import type { AuthModule } from '../auth/auth.module';
import type { FilesExports } from '../files/files.feature';
import type { TenancyExports } from '../tenancy/tenancy.feature';
import { createTenantResolver } from '../tenancy/tenant-context';
import { TenantScope } from '../tenancy/tenant-scope';
import { CustomStylesService } from './custom-styles.service';
import { imageEntities } from './image.entities';
import { ImageOperationStore } from './image-operations';
import { ImageSources } from './image-sources';
import { mountImageRoutes, upscaleJob } from './image-tools.routes';
import { ImageToolsService } from './image-tools.service';
import { CreateImageTools1764600000100 } from './migrations/1764600000100-CreateImageTools';
import { AddProviderJobs1764600000200 } from './migrations/1764600000200-AddProviderJobs';
import { providersFrom } from './providers/registry';

/** The image tools of section 4.2 this host runs (local engine), custom styles and stored operations. */
export const imagesFeature = defineFeature<
  ApiConfig,
  { tools: ImageToolsService },
  { tenancy: TenancyExports; auth: AuthModule; files: FilesExports }
>({
  name: 'images',
  entities: imageEntities,
  migrations: [CreateImageTools1764600000100, AddProviderJobs1764600000200],
  build: (deps, { tenancy, auth, files }) => {
    const { dataSource, bus, blobs, logger, config } = deps;
    const publicBase = config.PUBLIC_API_URL;
    const sources = new ImageSources(blobs, files.files, {
      fetchTimeoutMs: config.IMAGE_FETCH_TIMEOUT_MS,
      allowedCidrs: config.IMAGE_FETCH_ALLOWED_CIDRS,
      publicBase,
    });
    const styles = new CustomStylesService(sources);
    const operations = new ImageOperationStore(bus, blobs, files.files, publicBase);
    const tools = new ImageToolsService(bus, operations, logger, {
      pollMs: config.IMAGE_PREDICTION_POLL_MS,
      maxJobMs: 30 * 60_000,
      tenantOf: async (tenantId, userId) => {
        const role = await tenancy.tenants.roleOf(dataSource.manager, userId, tenantId);
        return role ? { id: tenantId, role, scope: new TenantScope(dataSource.manager, tenantId) } : null;
      },
    });
    const providers = providersFrom(config);
    const tenant = createTenantResolver(dataSource, tenancy.tenants);
    const aiRoute = [auth.authenticate, auth.aiLimit, tenant];
    const signedIn = [auth.authenticate, auth.standardLimit, tenant];
    return {
      routes: [(api) => mountImageRoutes(api, { tools, sources, styles, providers, aiRoute, signedIn })],
      // Jobs a provider was running when the process stopped are polled again (the source image
      // went to the provider already; only polling remains).
      consumers: async () => {
        const predictions = providers.predictions;
        await tools.resume(dataSource.manager, (tool) =>
          tool === 'upscale' && predictions ? upscaleJob(predictions, undefined, 0) : undefined,
        );
      },
      exports: { tools },
    };
  },
});
