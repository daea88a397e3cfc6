/** Whether two unions of string values are the same set. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * A compile-time check that a GraphQL enum holds exactly the values of the domain's list:
 * `sameValues<`${GraphqlEnum}`, DomainUnion>(true)` does not compile when one has a value the
 * other lacks. Does nothing at run time.
 */
export function sameValues<A extends string, B extends string>(same: Same<A, B>): void {
  void same;
}
