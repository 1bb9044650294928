import { execFileSync, spawnSync } from "node:child_process";
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
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
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

/** Runs npm like {@link runNpm}, answering what it wrote to stderr (its warnings), or throwing with it. */
export function npmWarnings(args: readonly string[], cwd: string): string {
  const run = spawnSync("npm", [...args], {
    cwd,
    env: npmEnvironment(),
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (run.status !== 0) {
    throw new Error(`npm ${args.join(" ")} exited ${run.status}:\n${run.stdout}${run.stderr}`);
  }
  return run.stderr;
}

/** The client package's folder (the one package of this repository that is published). */
export const CLIENT_DIR = join(ROOT, "client");

/**
 * `npm pack` of the client package into `dir`, exactly as a publish would
 * make it (its prepack script builds dist/); answers the tarball's name.
 */
export function packClient(dir: string): string {
  runNpm(["pack", "--pack-destination", dir], CLIENT_DIR);
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

/** The lockfile entries of `names` and of everything they depend on, at run time. */
function closure(lock: Lockfile, names: readonly string[]): Record<string, LockEntry> {
  const found: Record<string, LockEntry> = {};
  const queue = [...names];
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    const path = `node_modules/${name}`;
    const entry = lock.packages[path];
    if (entry === undefined || path in found) {
      continue;
    }
    found[path] = entry;
    queue.push(...Object.keys((entry.dependencies as Record<string, string> | undefined) ?? {}));
  }
  return found;
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
  const sdk = JSON.parse(readFileSync(join(CLIENT_DIR, "package.json"), "utf8")) as PackageJson;
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as Lockfile;
  const spec = `file:../${tarball}`;
  const packages: Record<string, LockEntry> = {
    "": { name: project.name, version: project.version, dependencies: { [sdk.name]: spec } },
    [`node_modules/${sdk.name}`]: {
      version: sdk.version,
      resolved: spec,
      license: sdk.license,
      dependencies: sdk.dependencies,
      peerDependencies: sdk.peerDependencies,
      peerDependenciesMeta: sdk.peerDependenciesMeta,
      bin: sdk.bin,
      engines: sdk.engines,
    },
  };
  for (const [path, entry] of Object.entries(closure(lock, Object.keys(sdk.dependencies ?? {})))) {
    if (entry.version !== undefined) {
      packages[path] = { resolved: registryTarball(path, entry.version), ...entry, dev: undefined };
    }
  }
  writeFileSync(
    join(dir, "package-lock.json"),
    `${JSON.stringify({ name: project.name, version: project.version, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
}

/**
 * Adds the repository's locked version of `name` (and what it depends on) to
 * the consumer project in `dir`, as `npm install name` would, offline.
 */
export function addLockedDependency(dir: string, name: string): void {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as Lockfile;
  const project = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
  const consumerLock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as Lockfile;
  const found = closure(lock, [name]);
  const version = found[`node_modules/${name}`]?.version;
  if (version === undefined) {
    throw new Error(`${name} is not in the repository's lockfile`);
  }
  project.dependencies = { ...project.dependencies, [name]: version };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(project, null, 2)}\n`);
  const root = consumerLock.packages[""];
  if (root !== undefined) {
    root.dependencies = { ...(root.dependencies as Record<string, string>), [name]: version };
  }
  for (const [path, entry] of Object.entries(found)) {
    if (!(path in consumerLock.packages) && entry.version !== undefined) {
      consumerLock.packages[path] = {
        resolved: registryTarball(path, entry.version),
        ...entry,
        dev: undefined,
      };
    }
  }
  writeFileSync(join(dir, "package-lock.json"), `${JSON.stringify(consumerLock, null, 2)}\n`);
  runNpm(["ci", "--offline", "--no-audit", "--no-fund"], dir);
}
