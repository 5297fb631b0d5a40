import { startTestService, type TestService } from '@hwp/platform/test-kit';
import { type ApiConfig, loadApiConfig } from '../../src/config';
import { apiService } from '../../src/service';

export type ApiTestService = TestService<ApiConfig>;

/**
 * The API host on a fresh Postgres database and its own RabbitMQ namespace. Signup confirms at once
 * unless a test asks otherwise; it signs with the run's key (jest's global setup), which
 * `JWT_PRIVATE_KEY: undefined` turns off (the host then generates one in its data folder, as in
 * development); every other setting is the production default.
 */
export function startApi(env: Record<string, string | undefined> = {}): Promise<ApiTestService> {
  return startTestService(apiService, loadApiConfig, {
    AUTH_REQUIRE_CONFIRMATION: 'false',
    JWT_PRIVATE_KEY: process.env.HWP_TEST_API_KEY,
    ...env,
  });
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
