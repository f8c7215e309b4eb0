// Private temporary directories (for Unix sockets) that name the process
// owning them, so that a later start can sweep those a killed process
// left: a host killed with kill -9 cannot remove its socket directory.
// makeOwnedDir writes the owner's pid into the directory (owner.pid);
// sweepDead removes the directories of a prefix whose owner is gone, and
// only those — a directory without the marker, of another user, or whose
// owner runs is left alone. The Python host SDK does the same
// (agentplugin_host/tmpdirs.py).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** The file in an owned directory that names its owner's pid. */
export const OWNER_FILE = "owner.pid";

/**
 * A new 0700 directory in the temporary directory naming this process as
 * its owner; the directories of the same prefix that dead processes left
 * are swept first.
 */
export function makeOwnedDir(prefix: string): string {
  sweepDead(prefix);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o700);
  fs.writeFileSync(path.join(dir, OWNER_FILE), `${process.pid}\n`);
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: another user's process has that pid; not ours to judge dead.
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** Removes root/prefix* directories of this user whose owner is dead; returns those removed. */
export function sweepDead(prefix: string, root: string = os.tmpdir()): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(root).filter((n) => n.startsWith(prefix));
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const n of names) {
    const dir = path.join(root, n);
    let pid: number;
    try {
      const st = fs.lstatSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      pid = Number.parseInt(fs.readFileSync(path.join(dir, OWNER_FILE), "utf8").trim(), 10);
    } catch {
      continue;
    }
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || alive(pid)) continue;
    fs.rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}
