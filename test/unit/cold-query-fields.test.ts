import { getNamedType, isObjectType, type GraphQLObjectType, type GraphQLResolveInfo } from 'graphql';
import { describe, expect, it } from 'vitest';
import { fieldsWithResolvers } from '../../src/graphql/cold-writer.js';
import { graphqlSchema } from '../../src/graphql/schema.js';
import { SESSION_FIELDS, type ViewFields } from '../../src/graphql/views.js';

/**
 * The cold lane (src/graphql/cold-queries.ts) makes a field from the session's view unless type-graphql's metadata
 * names a resolver for it. Each field it makes so must be one Apollo too reads as the view's own property: a field
 * resolver the metadata did not show would be answered from the view, differently from Apollo.
 */
describe("the cold lane's fields", () => {
  it('are, for CheckoutSession and the types below it, what the schema itself reads from a view', async () => {
    const schema = await graphqlSchema();
    const resolvers = fieldsWithResolvers();
    const checked: string[] = [];
    const check = (type: GraphQLObjectType, fields: ViewFields<unknown> | undefined, seen: Set<string>) => {
      if (seen.has(type.name)) return;
      seen.add(type.name);
      for (const field of Object.values(type.getFields())) {
        const named = getNamedType(field.type);
        if (resolvers.get(type.name)?.has(field.name)) {
          // What its resolver gives is read as plain objects' own properties.
          if (isObjectType(named)) check(named, undefined, seen);
          continue;
        }
        // A view whose every property is a mark of its own: the schema's resolver must answer the field's.
        const view = { [field.name]: { mark: `${type.name}.${field.name}` } };
        let answered: unknown;
        try {
          answered = field.resolve?.(view, {}, {}, {} as GraphQLResolveInfo) ?? view[field.name];
        } catch (error) {
          answered = error;
        }
        expect(answered, `${type.name}.${field.name} is read by a resolver of its own`).toBe(view[field.name]);
        if (fields !== undefined) expect(fields.has(field.name), `${type.name}.${field.name} has a maker`).toBe(true);
        checked.push(`${type.name}.${field.name}`);
        if (isObjectType(named)) check(named, fields?.get(field.name)?.items?.fields, seen);
      }
    };
    check(schema.getType('CheckoutSession') as GraphQLObjectType, SESSION_FIELDS as ViewFields<unknown>, new Set());
    expect(checked).toContain('CheckoutSession.paymentOptions');
    expect(checked).toContain('PaymentOption.uri');
    expect(checked).toContain('BoundTransaction.txHash');
  });

  it("leave the session's own field resolvers to their resolvers", () => {
    const resolved = fieldsWithResolvers().get('CheckoutSession');
    expect(resolved).toContain('transactions');
    expect(resolved).toContain('merchant');
  });
});
