/** Whether two unions of string values are the same set. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * Compile-time check that a GraphQL enum holds exactly the domain's values: `sameValues<`${GraphqlEnum}`,
 * DomainUnion>(true)` does not compile when one has a value the other lacks.
 */
export function sameValues<A extends string, B extends string>(same: Same<A, B>): void {
  void same;
}
