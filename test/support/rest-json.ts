// Bodies as the REST mapping takes them, for the tests that send them by hand.

/** A REST body's fields as a test writes them: a signed request's timestamp is a bigint. */
export type Fields = Record<string, string | bigint | number | readonly string[] | undefined>;

/** `value` as JSON, a bigint written as the number REST expects. */
export function restJson(value: object): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v));
}
