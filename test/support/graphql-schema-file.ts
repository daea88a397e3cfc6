import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/config.js';

/** Where `npm run schema:graphql` writes the SDL (src/graphql/emit-schema.ts). */
export const SCHEMA_FILE_PATH = path.join(PACKAGE_ROOT, 'schema.graphql');
