import { realpathSync, statSync } from "node:fs";
import { dirname } from "node:path";

/** The user ids a trusted file may belong to: this process's and root's (who could change it anyway). */
function trustedOwner(uid: number): boolean {
  const self = process.geteuid?.();
  return self === undefined || uid === self || uid === 0;
}

const octal = (mode: number) => `0${(mode & 0o7777).toString(8)}`;

/**
 * Why a file or folder of the service's secrets cannot be trusted, or
 * undefined when it can: as ssh refuses an authorized_keys another user could
 * have written, it must belong to this process's user (or root) and be
 * writable by no group and no other user, since anyone who can write it
 * chooses the operators (or the data folder's Redis). A file's folder is held
 * to the same rule, as whoever may write there can replace the file, except
 * that a sticky folder (such as /tmp) is fine: others cannot replace a file
 * they do not own there. Symlinks are followed: the file read is the one
 * judged.
 */
export function untrustedReason(path: string, kind: "file" | "folder"): string | undefined {
  const real = realpathSync(path);
  const stat = statSync(real);
  const problems: string[] = [];
  if (!trustedOwner(stat.uid)) {
    problems.push(`is owned by uid ${stat.uid}, not by this service's user or root`);
  }
  if ((stat.mode & 0o022) !== 0) {
    problems.push(`is writable by its group or other users (mode ${octal(stat.mode)})`);
  }
  if (kind === "file") {
    const parent = dirname(real);
    const folder = statSync(parent);
    // Sticky: others cannot replace or remove a file they do not own there.
    if ((folder.mode & 0o1000) === 0) {
      if (!trustedOwner(folder.uid)) {
        problems.push(`is in ${parent}, owned by uid ${folder.uid}`);
      } else if ((folder.mode & 0o022) !== 0) {
        problems.push(
          `is in ${parent}, which its group or other users may write (mode ${octal(folder.mode)})`,
        );
      }
    }
  }
  return problems.length === 0 ? undefined : problems.join(" and ");
}
