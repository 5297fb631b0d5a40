import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Express } from 'express';
import request from 'supertest';

const DOCUMENT_ID = 'openapi';

/** One compiled validator set per app: the document is fetched and compiled once per test file. */
const validators = new WeakMap<Express, Promise<Ajv2020>>();

async function compile(app: Express): Promise<Ajv2020> {
  const res = await request(app).get('/openapi.json');
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
  const schemas = (res.body as { components?: { schemas?: Record<string, unknown> } }).components?.schemas;
  if (!schemas) throw new Error('the OpenAPI document has no components.schemas');
  // Not strict: the document may carry OpenAPI-only annotations (example, ...) that ajv does not know.
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  // One schema holding every component, so `#/components/schemas/X` refs resolve inside it.
  ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas } });
  return ajv;
}

function validatorsOf(app: Express): Promise<Ajv2020> {
  let pending = validators.get(app);
  if (!pending) {
    pending = compile(app);
    validators.set(app, pending);
  }
  return pending;
}

/** The validator of `components.schemas[name]` of the app's own OpenAPI document. */
export async function schemaValidator(app: Express, name: string): Promise<ValidateFunction> {
  const ajv = await validatorsOf(app);
  const validate = ajv.getSchema(`${DOCUMENT_ID}#/components/schemas/${name}`);
  if (!validate) throw new Error(`no components.schemas.${name} in the OpenAPI document`);
  return validate;
}

/**
 * Fails unless `body` conforms to `components.schemas[name]` of the app's `/openapi.json`, so a
 * test notices when a response drifts from the published contract (e.g. `Tenant`, `AuthResponse`).
 */
export async function expectSchema(app: Express, name: string, body: unknown): Promise<void> {
  const validate = await schemaValidator(app, name);
  if (!validate(body)) {
    const ajv = await validatorsOf(app);
    throw new Error(
      `response does not match components.schemas.${name}: ${ajv.errorsText(validate.errors, { separator: '; ' })}\n` +
        JSON.stringify(body, null, 2),
    );
  }
}
