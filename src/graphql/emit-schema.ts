import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../config.js';
import { printGraphqlSchema } from './schema.js';

/** `npm run schema:graphql`: writes the SDL that test/unit/graphql-schema-drift.test.ts compares with the code. */
export const SCHEMA_FILE = path.join(PACKAGE_ROOT, 'schema.graphql');

writeFileSync(SCHEMA_FILE, await printGraphqlSchema());
process.stdout.write(`wrote ${path.relative(process.cwd(), SCHEMA_FILE) || SCHEMA_FILE}\n`);
