import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../config/package-root.js';
import { renderClientTypes } from './client-types.js';
import { buildOpenApiDocument } from './openapi.js';

/** `npm run client:types`: writes the client's types (test/unit/client-types-drift.test.ts compares them). */
const CLIENT_TYPES_FILE = path.join(PACKAGE_ROOT, 'clients/typescript/src/types.ts');

writeFileSync(CLIENT_TYPES_FILE, renderClientTypes(buildOpenApiDocument()));
process.stdout.write(`wrote ${path.relative(process.cwd(), CLIENT_TYPES_FILE) || CLIENT_TYPES_FILE}\n`);
