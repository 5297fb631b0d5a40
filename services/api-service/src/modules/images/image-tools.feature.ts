import { defineFeature } from '@hwp/platform';
import type { ApiConfig } from '../../config';
import type { AuthModule } from '../auth/auth.module';
import type { FilesExports } from '../files/files.feature';
import type { TenancyExports } from '../tenants/tenancy.feature';
import { createTenantResolver } from '../tenants/tenant-context';
import { imageEntities } from './image.entities';
import { mountImageRoutes } from './image-tools.routes';
import { ImageToolsService } from './image-tools.service';
import { CreateImageTools1764600000100 } from './migrations/1764600000100-CreateImageTools';

/** The image tools of section 4.2 this host runs (local engine), custom styles and stored operations. */
export const imageToolsFeature = defineFeature<
  ApiConfig,
  { tools: ImageToolsService },
  { tenancy: TenancyExports; accounts: AuthModule; files: FilesExports }
>({
  name: 'images',
  entities: imageEntities,
  migrations: [CreateImageTools1764600000100],
  build: (deps, { tenancy, accounts, files }) => {
    const { dataSource, bus, blobs, logger, config } = deps;
    const tools = new ImageToolsService(bus, blobs, files.files, logger, {
      fetchTimeoutMs: config.IMAGE_FETCH_TIMEOUT_MS,
      allowedCidrs: config.IMAGE_FETCH_ALLOWED_CIDRS,
    });
    const tenant = createTenantResolver(dataSource, tenancy.tenants);
    const aiRoute = [accounts.authenticate, accounts.aiLimit, tenant];
    const signedIn = [accounts.authenticate, accounts.standardLimit, tenant];
    return {
      routes: [(api) => mountImageRoutes(api, { tools, aiRoute, signedIn })],
      exports: { tools },
    };
  },
});
