import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

interface LockEntry {
  version?: string;
  resolved?: string;
  dev?: boolean;
  [field: string]: unknown;
}

interface Lockfile {
  packages: Record<string, LockEntry>;
}

interface PackageJson {
  name: string;
  version: string;
  license?: string;
  engines?: Record<string, string>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
}

/**
 * The environment of an npm run in a test: this process's, without what the
 * test runner and an outer `npm test` put there (npm_config_*, npm_lifecycle_*
 * would steer the inner npm).
 */
export function npmEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(npm_|NODE_OPTIONS$|NODE_TEST_CONTEXT$)/i.test(name)) {
      env[name] = value;
    }
  }
  return env;
}

export function runNpm(args: readonly string[], cwd: string): string {
  return execFileSync("npm", [...args], {
    cwd,
    env: npmEnvironment(),
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * `npm pack` of the repository into `dir`, exactly as a publish would make
 * it (its prepare script builds dist/ afresh); answers the tarball's name.
 */
export function packRepository(dir: string): string {
  runNpm(["pack", "--pack-destination", dir], ROOT);
  const [tarball, ...more] = readdirSync(dir).filter((file) => file.endsWith(".tgz"));
  if (tarball === undefined || more.length > 0) {
    throw new Error(`npm pack wrote ${[tarball, ...more].join(", ")}`);
  }
  return tarball;
}

// The registry's tarball address; the repository's lockfile omits it.
function registryTarball(path: string, version: string): string {
  const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
  const base = name.slice(name.lastIndexOf("/") + 1);
  return `https://registry.npmjs.org/${name}/-/${base}-${version}.tgz`;
}

/**
 * A new project in `dir` (npm init -y) whose lockfile pins the tarball's
 * dependencies to the versions of the repository's lockfile, as a user's
 * lockfile would. Why: `npm ci` fetched this machine's npm cache by
 * lockfile, so it holds those tarballs but no registry metadata, and an
 * install that had to resolve version ranges would need the network.
 */
export function createConsumerProject(dir: string, tarball: string): void {
  mkdirSync(dir, { recursive: true });
  runNpm(["init", "-y"], dir);
  const project = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
  const sdk = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as PackageJson;
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as Lockfile;
  const spec = `file:../${tarball}`;
  const packages: Record<string, LockEntry> = {
    "": { name: project.name, version: project.version, dependencies: { [sdk.name]: spec } },
    [`node_modules/${sdk.name}`]: {
      version: sdk.version,
      resolved: spec,
      license: sdk.license,
      dependencies: sdk.dependencies,
      bin: sdk.bin,
      engines: sdk.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path.startsWith("node_modules/") && entry.dev !== true && entry.version !== undefined) {
      packages[path] = { resolved: registryTarball(path, entry.version), ...entry };
    }
  }
  writeFileSync(
    join(dir, "package-lock.json"),
    `${JSON.stringify({ name: project.name, version: project.version, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
}
