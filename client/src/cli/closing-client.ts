/** Runs `use` with `client`, and closes the client after, whatever the outcome. */
export async function closingClient<C extends { close(): void }, R>(
  client: C,
  use: (client: C) => Promise<R>,
): Promise<R> {
  try {
    return await use(client);
  } finally {
    client.close();
  }
}
