/**
 * Runs a bench script's `main`; a failure is written to stderr under the
 * script's name (`bench`, `bench:ladder`…) and sets exit code 1.
 */
export async function runMain(name: string, main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (error) {
    process.stderr.write(
      `${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  }
}
