/**
 * Runs a write, then `forget` whatever came of it (answered, refused or
 * failed): a cached record never outlives its delete's answer.
 */
export async function forgettingAfter<T>(forget: () => void, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } finally {
    forget();
  }
}
