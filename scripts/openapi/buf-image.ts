import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createFileRegistry, type FileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

export interface BufImageOptions {
  /** The buf workspace (where buf.yaml is), as a file URL or path. Default: this repository. */
  workspace?: URL | string;
  /** Proto files or folders to build, relative to the workspace. Default: `["proto/perps"]`. */
  paths?: readonly string[];
}

const repositoryRoot = new URL("../../", import.meta.url);

/**
 * The descriptors of the workspace's protos, built by `buf build` with their
 * source info, so comments can be read (the descriptors generated code
 * embeds have none). Needs the `buf` devDependency: for generation and tests,
 * not for the running service.
 */
export function readBufImage(opts: BufImageOptions = {}): FileRegistry {
  const workspace = toPath(opts.workspace ?? repositoryRoot);
  const buf = fileURLToPath(new URL("node_modules/.bin/buf", repositoryRoot));
  const args = ["build", ...(opts.paths ?? ["proto/perps"]).flatMap((p) => ["--path", p])];
  // An image is a FileDescriptorSet with extra fields, which are skipped.
  const bytes = execFileSync(buf, [...args, "-o", "-#format=binpb"], {
    cwd: workspace,
    maxBuffer: 64 * 1024 * 1024,
  });
  return createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
}

function toPath(location: URL | string): string {
  return location instanceof URL ? fileURLToPath(location) : location;
}
