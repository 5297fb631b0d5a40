// Every test file: each supertest answer is checked against the OpenAPI document of its app.
import { installResponseValidation } from '../../packages/platform/src/test-kit/response-validation';

installResponseValidation();
