import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * Prisma's own schema parser, offline: the `prisma` package (a devDependency)
 * ships the `@prisma/prisma-schema-wasm` build as build/prisma_schema_build_bg.wasm,
 * but its JavaScript glue is bundled inside the CLI and cannot be imported. This is
 * the small wasm-bindgen glue for the one export we need, `get_dmmf`, so the schema
 * test reads schema.prisma exactly as `prisma generate` and `prisma migrate` do.
 */

export interface DmmfField {
  readonly name: string;
  /** The column name when the field has @map. */
  readonly dbName?: string | null;
  readonly kind: 'scalar' | 'object' | 'enum' | 'unsupported';
  readonly isList: boolean;
  readonly isRequired: boolean;
  readonly isUnique: boolean;
  readonly isId: boolean;
  readonly hasDefaultValue: boolean;
  readonly type: string;
  /** `@db.X(args)` as [X, args]. */
  readonly nativeType: readonly [string, readonly string[]] | null;
  readonly default?: unknown;
  readonly relationName?: string;
  readonly relationFromFields?: readonly string[];
  readonly relationToFields?: readonly string[];
  readonly relationOnDelete?: string;
  readonly relationOnUpdate?: string;
}

export interface DmmfModel {
  readonly name: string;
  readonly dbName: string | null;
  readonly schema: string | null;
  readonly fields: readonly DmmfField[];
}

export interface DmmfEnum {
  readonly name: string;
  readonly dbName: string | null;
  readonly values: ReadonlyArray<{ readonly name: string; readonly dbName: string | null }>;
}

export interface DmmfIndex {
  readonly model: string;
  readonly type: 'id' | 'unique' | 'normal' | 'fulltext';
  readonly isDefinedOnField: boolean;
  /** The constraint/index name when given with `map:`. */
  readonly dbName?: string;
  readonly algorithm?: string;
  readonly fields: ReadonlyArray<{
    readonly name: string;
    readonly sortOrder?: 'asc' | 'desc';
    readonly length?: number;
    readonly operatorClass?: string;
  }>;
}

export interface DmmfDatamodel {
  readonly enums: readonly DmmfEnum[];
  readonly models: readonly DmmfModel[];
  readonly types: readonly unknown[];
  readonly indexes: readonly DmmfIndex[];
}

const require = createRequire(import.meta.url);

/** Where the installed `prisma` package keeps the schema wasm. */
export const SCHEMA_WASM = path.join(
  path.dirname(require.resolve('prisma/package.json')),
  'build',
  'prisma_schema_build_bg.wasm',
);

// tsconfig's lib (ES2023) has no WebAssembly types; Node has the API. The little used here:
interface WasmApi {
  readonly Module: {
    new (bytes: Uint8Array): object;
    imports(module: object): Array<{ module: string; name: string; kind: string }>;
  };
  readonly Instance: new (module: object, imports: object) => { readonly exports: unknown };
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface SchemaWasmExports {
  readonly memory: { readonly buffer: ArrayBuffer };
  readonly __wbindgen_externrefs: {
    get(index: number): unknown;
    set(index: number, value: unknown): void;
    grow(delta: number): number;
  };
  __wbindgen_malloc(size: number, align: number): number;
  __wbindgen_free(ptr: number, size: number, align: number): void;
  __externref_table_dealloc(index: number): void;
  __wbindgen_start(): void;
  get_dmmf(ptr: number, len: number): [number, number, number, number];
}

let instance: SchemaWasmExports | null = null;
let lastPanic: string | null = null;

function load(): SchemaWasmExports {
  if (instance) return instance;
  const module = new Wasm.Module(readFileSync(SCHEMA_WASM));
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const text = (ptr: number, len: number) => decoder.decode(new Uint8Array(exports.memory.buffer, ptr >>> 0, len));
  // wasm-bindgen suffixes its imports with a hash that changes between releases: match by prefix.
  const implementations: Array<[string, (...args: number[]) => unknown]> = [
    ['__wbg_set_message_', (ptr, len) => void (lastPanic = text(ptr!, len!))],
    ['__wbg_Error_', (ptr, len) => new Error(text(ptr!, len!))],
    [
      '__wbg___wbindgen_throw_',
      (ptr, len) => {
        throw new Error(text(ptr!, len!));
      },
    ],
    [
      '__wbindgen_init_externref_table',
      () => {
        const table = exports.__wbindgen_externrefs;
        const offset = table.grow(4);
        table.set(0, undefined);
        table.set(offset + 0, undefined);
        table.set(offset + 1, null);
        table.set(offset + 2, true);
        table.set(offset + 3, false);
      },
    ],
  ];
  const imports: Record<string, Record<string, (...args: number[]) => unknown>> = {};
  for (const wanted of Wasm.Module.imports(module)) {
    const implementation = implementations.find(([prefix]) => wanted.name.startsWith(prefix));
    if (!implementation || wanted.kind !== 'function') {
      throw new Error(
        `${SCHEMA_WASM} needs an import this glue does not provide (${wanted.module}.${wanted.name}); ` +
          'the installed prisma changed its schema wasm: update test/support/schema-dmmf.ts',
      );
    }
    (imports[wanted.module] ??= {})[wanted.name] = implementation[1];
  }
  const exports = new Wasm.Instance(module, imports).exports as SchemaWasmExports;
  exports.__wbindgen_start();
  instance = exports;
  return exports;
}

/** The DMMF datamodel of a Prisma schema, as Prisma's own parser builds it; throws Prisma's validation errors. */
export function getDmmf(schema: string): DmmfDatamodel {
  const wasm = load();
  const input = new TextEncoder().encode(JSON.stringify({ prismaSchema: schema, noColor: true }));
  const inputPtr = wasm.__wbindgen_malloc(input.length, 1) >>> 0;
  new Uint8Array(wasm.memory.buffer).set(input, inputPtr);
  let result: [number, number, number, number];
  try {
    result = wasm.get_dmmf(inputPtr, input.length);
  } catch (error) {
    throw new Error(`prisma schema wasm panicked: ${lastPanic ?? (error as Error).message}`);
  }
  const [ptr, len, errorRef, failed] = result;
  if (failed) {
    const error = wasm.__wbindgen_externrefs.get(errorRef) as Error;
    wasm.__externref_table_dealloc(errorRef);
    throw new Error(`schema.prisma is not valid for Prisma: ${error.message}`);
  }
  try {
    const json = new TextDecoder().decode(new Uint8Array(wasm.memory.buffer, ptr >>> 0, len));
    return (JSON.parse(json) as { datamodel: DmmfDatamodel }).datamodel;
  } finally {
    wasm.__wbindgen_free(ptr, len, 1);
  }
}
