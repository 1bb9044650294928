/**
 * A value a suite's `before` hook makes, handed out before the hook has run:
 * `[value, set, isSet]`. `value` stands for it, every property read going to
 * what `set` was given; `isSet` tells an `after` hook whether `before` got
 * that far. Lets a shared set-up (test/support/*-suite.ts) give a describe
 * block its service, Redis and clients as plain names (`service.publicUrl`).
 */
export function lateValue<T extends object>(
  name: string,
): readonly [value: T, set: (value: T) => void, isSet: () => boolean] {
  let value: T | undefined;
  const current = (): T => {
    if (value === undefined) {
      throw new Error(`${name} was read before the suite's before hook made it`);
    }
    return value;
  };
  const stand = new Proxy<T>({} as T, {
    get(_stand, key) {
      const target = current();
      const read: unknown = Reflect.get(target, key, target);
      return typeof read === "function" ? read.bind(target) : read;
    },
    has(_stand, key) {
      return Reflect.has(current(), key);
    },
  });
  const set = (next: T) => {
    value = next;
  };
  return [stand, set, () => value !== undefined];
}
