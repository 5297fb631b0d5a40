import { runServiceMain } from '@hwp/platform';
import { loadApiConfig } from './config';
import { apiService } from './service';

void runServiceMain(apiService, loadApiConfig);
