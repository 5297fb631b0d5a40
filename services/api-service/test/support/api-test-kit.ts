import { apiTestEnv, startTestService, type TestService } from '@hwp/platform/test-kit';
import { type ApiConfig, loadApiConfig } from '../../src/config';
import { apiService } from '../../src/service';

export type ApiTestService = TestService<ApiConfig>;

/**
 * The API host on a fresh Postgres database and its own RabbitMQ namespace, with the tests' settings
 * (`apiTestEnv`); `JWT_PRIVATE_KEY: undefined` turns the run's key off (the host then generates one
 * in its data folder, as in development).
 */
export function startApi(env: Record<string, string | undefined> = {}): Promise<ApiTestService> {
  return startTestService(apiService, loadApiConfig, { ...apiTestEnv(), ...env });
}

// The user factory and the authenticated client are the platform test kit's, shared with the
// collaboration host's tests.
export {
  as,
  codeIn,
  latestMessage,
  linkIn,
  newClientIp,
  signUp,
  type TestUser,
  uniqueEmail,
  uniquePhone,
} from '@hwp/platform/test-kit';
