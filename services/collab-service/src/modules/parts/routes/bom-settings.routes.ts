import { BomSettings, ErrorBodyDto, UpdateBomSettingsRequest } from '@hwp/contracts';
import { fromParam } from '../../workspace-access/workspace-access';
import { memberRoute } from '../../workspace-access/workspace-route';
import type { BomSettingsService } from '../bom-settings.service';
import { acceptSnakeCase } from './part-routing';

export const getBomSettings = (settings: BomSettingsService) =>
  memberRoute({
    method: 'get',
    path: '/v1/workspaces/:name/bom-settings',
    summary: 'Numbering rules and domain templates of a workspace',
    tags: ['boms'],
    role: 'viewer',
    workspace: fromParam('name'),
    responses: {
      200: { description: 'The settings (defaults until a manager stores some)', schema: BomSettings },
    },
    handler: ({ workspace }) => settings.get(workspace),
  });

export const updateBomSettings = (settings: BomSettingsService) =>
  memberRoute({
    method: 'post',
    path: '/v1/workspaces/:name/bom-settings',
    summary: 'Store numbering rules and/or domain templates',
    description:
      '`numbering_rules` (or `numberingRules`): per domain `{ prefix, width }`, part numbers `<prefix><width ' +
      'digits>`. `domain_templates` (or `domainTemplates`): per domain `{ required: [names], enforce (default ' +
      'true), schema? }`, `schema` a JSON Schema the attributes must satisfy. Each field given replaces the stored one. ' +
      'Every regular expression of a schema (`pattern` values and `patternProperties` keys, at any depth) must be valid ' +
      'with the `u` flag, at most 512 characters, free of lookaround and backreferences (patterns run on a linear-time ' +
      'engine) and unable to backtrack catastrophically (such as `^(a+)+$`); each one that is not is a 400 error naming ' +
      'its path, e.g. `domainTemplates.other.schema.properties.code.pattern`.',
    tags: ['boms'],
    role: 'manager',
    workspace: fromParam('name'),
    before: [acceptSnakeCase],
    body: UpdateBomSettingsRequest,
    responses: {
      200: { description: 'The stored settings', schema: BomSettings },
      400: {
        description: 'Invalid settings; `errors` names each bad rule, template or pattern by its path',
        schema: ErrorBodyDto,
      },
    },
    handler: ({ body, user, workspace }) => settings.update(user, workspace, body),
  });
