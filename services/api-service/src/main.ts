import { configOrExit } from '@hwp/platform/config';
import { loadApiConfig } from './config';

// The configuration is checked before the service's code (some 1,600 modules) is loaded: a bad
// value is refused in a tenth of a second.
const config = configOrExit('api-service', loadApiConfig);
const { runServiceMain } = require('@hwp/platform') as typeof import('@hwp/platform');
const { apiService } = require('./service') as typeof import('./service');
void runServiceMain(apiService, config);
