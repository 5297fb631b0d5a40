import { runServiceMain } from '@hwp/platform';
import { loadCollabConfig } from './config';
import { collabService } from './service';

void runServiceMain(collabService, loadCollabConfig);
