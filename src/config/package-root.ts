import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the package lives: config/ and prisma/ are resolved from here, not from the cwd. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
