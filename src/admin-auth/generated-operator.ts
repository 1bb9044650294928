import { createHash, randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { credentialsLine } from "./credentials-file.js";

/** Names of the generated operator's files in the service's data folder. */
export const GENERATED_CREDENTIALS_FILE = "admin-credentials";
export const GENERATED_SECRET_FILE = "operator-secret";
/** The operator written when none is configured. */
export const GENERATED_OPERATOR = "local";

export interface GeneratedOperator {
  /** The credentials file to use (absolute). */
  credentialsFile: string;
  /** Where the generated secret is (absolute, mode 0600). */
  secretFile: string;
  /** True when this call wrote them; false when an earlier start had. */
  created: boolean;
}

/**
 * With no ADMIN_CREDENTIALS_FILE, the service's data folder holds one
 * operator, `local`: its secret in `operator-secret` (mode 0600) and the
 * secret's hash in `admin-credentials`, written by the first start and used
 * by every later one, so that a fresh checkout works and the CLI run in the
 * same folder finds the secret. Two starts racing write one operator: the
 * credentials file appears by an atomic link, and only its writer puts its
 * secret in place.
 */
export function ensureGeneratedOperator(dir: string): GeneratedOperator {
  const folder = resolve(dir);
  const credentialsFile = join(folder, GENERATED_CREDENTIALS_FILE);
  const secretFile = join(folder, GENERATED_SECRET_FILE);
  if (existsSync(credentialsFile)) {
    return { credentialsFile, secretFile, created: false };
  }
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const secret = `op_${randomBytes(32).toString("base64url")}`;
  const hash = createHash("sha256").update(secret, "utf8").digest("hex");
  const stage = `.${process.pid}-${randomBytes(4).toString("hex")}`;
  const credentialsStage = `${credentialsFile}${stage}`;
  const secretStage = `${secretFile}${stage}`;
  writeFileSync(
    credentialsStage,
    `# Written by the service's first start: operator "${GENERATED_OPERATOR}", secret in ${GENERATED_SECRET_FILE}.\n${credentialsLine(GENERATED_OPERATOR, hash)}\n`,
    { mode: 0o600 },
  );
  writeFileSync(secretStage, `${secret}\n`, { mode: 0o600 });
  try {
    linkSync(credentialsStage, credentialsFile);
  } catch (err) {
    if ((err as { code?: string }).code !== "EEXIST") {
      throw err;
    }
    rmSync(secretStage, { force: true });
    return { credentialsFile, secretFile, created: false };
  } finally {
    rmSync(credentialsStage, { force: true });
  }
  renameSync(secretStage, secretFile);
  return { credentialsFile, secretFile, created: true };
}
