/** Counts with their noun in the right number: `1 subject`, `2 subjects`, `1,204 products`. Pure: plural.test.ts. */

/** `n` grouped (en-US) and `one` when n is 1, else `many` (default `one` + "s"). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
