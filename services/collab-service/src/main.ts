import { configOrExit } from '@hwp/platform/config';
import { loadCollabConfig } from './config';

// The configuration is checked before the service's code (some 1,600 modules) is loaded: a bad
// value is refused in a tenth of a second.
const config = configOrExit('collab-service', loadCollabConfig);
const { runServiceMain } = require('@hwp/platform') as typeof import('@hwp/platform');
const { collabService } = require('./service') as typeof import('./service');
void runServiceMain(collabService, config);
