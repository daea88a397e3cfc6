import { defineConfig } from 'prisma/config';

// Migrations are plain SQL applied by `kassa migrate` (the schema engine
// cannot be downloaded here); this file serves `prisma generate` and lets
// operators who have the engine run `prisma migrate status/deploy`.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/kassa' },
});
