// Every byte the loader reads comes through here: bounded, hashed, and never from outside the core.
import { createHash } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { CoreIssue } from './errors.js';
import { MAX_CORE_FILE_BYTES, MAX_CORE_FILES, MAX_CORE_TOTAL_BYTES, MAX_TOOL_DIR_DEPTH } from './names.js';
import { isInside } from './path-rules.js';

export interface CoreFile {
  /** Core-relative posix path as the author sees it (symlinks not resolved). */
  readonly rel: string;
  /** The resolved location on disk, inside the core. */
  readonly real: string;
  readonly bytes: Buffer;
  readonly sha256: string;
}

export interface CoreDirEntry {
  readonly name: string;
  readonly rel: string;
  readonly kind: 'file' | 'dir' | 'other';
}

/** A tool folder whose entries must stay inside it: core-relative and real path. */
interface Folder {
  rel: string;
  real: string;
}

type Resolved = { kind: 'missing' } | { kind: 'refused' } | { kind: 'found'; real: string; isFile: boolean; isDir: boolean };

// O_NONBLOCK: opening a FIFO planted in a core must not hang the loader. O_NOFOLLOW: the path is already resolved.
const OPEN_FLAGS = fsc.O_RDONLY | (fsc.O_NOFOLLOW ?? 0) | (fsc.O_NONBLOCK ?? 0);

/** Reads files of one core, recording each one's hash for the revision and each problem as an issue. */
export class CoreReader {
  readonly issues: CoreIssue[] = [];
  private readonly files = new Map<string, CoreFile>();
  private totalBytes = 0;
  private budgetReported = false;
  private readonly reported = new Set<string>();
  /** Tool folders being read by readFolder: their own rule replaces the own-folder rule of read(). */
  private readonly folders: string[] = [];

  /** `root` must already be a real path (no symlinks), so containment checks compare like with like. */
  constructor(readonly root: string) {}

  /** Every file read so far, sorted by path: the input of the revision. */
  records(): { path: string; sha256: string }[] {
    return [...this.files.values()].map((f) => ({ path: f.rel, sha256: f.sha256 })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** The real path of a core-relative path, or null (with an issue) when it is missing or refused. */
  async realPath(rel: string): Promise<string | null> {
    const r = await this.resolve(rel);
    return r.kind === 'found' ? r.real : null;
  }

  async exists(rel: string): Promise<boolean> {
    return (await this.resolve(rel, { quiet: true })).kind !== 'missing';
  }

  /** Reads one regular file. `missing` is the issue message when it does not exist (null: silently absent). */
  async read(rel: string, missing: string | null): Promise<CoreFile | null> {
    const cached = this.files.get(rel);
    if (cached !== undefined) return cached;
    const r = await this.resolve(rel);
    if (r.kind === 'missing') {
      if (missing !== null) this.issue(rel, missing);
      return null;
    }
    if (r.kind === 'refused') return null;
    if (!r.isFile) {
      this.issue(rel, `is not a regular file; replace it with a file${r.isDir ? ' (it is a directory)' : ''}`);
      return null;
    }
    if (!(await this.staysInOwnFolder(rel, r.real))) return null;
    if (this.files.size >= MAX_CORE_FILES) return this.overBudget(rel, `more than ${MAX_CORE_FILES} files`);
    let handle: fs.FileHandle | undefined;
    try {
      handle = await fs.open(r.real, OPEN_FLAGS);
      const st = await handle.stat();
      if (!st.isFile()) {
        this.issue(rel, 'is not a regular file; replace it with a file');
        return null;
      }
      if (st.size > MAX_CORE_FILE_BYTES) return this.tooBig(rel, st.size);
      // Read one byte past the limit, so a file that grows after stat is still caught.
      const buf = Buffer.alloc(MAX_CORE_FILE_BYTES + 1);
      let n = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buf, n, buf.length - n, n);
        if (bytesRead === 0) break;
        n += bytesRead;
        if (n === buf.length) break;
      }
      if (n > MAX_CORE_FILE_BYTES) return this.tooBig(rel, n);
      if (this.totalBytes + n > MAX_CORE_TOTAL_BYTES) return this.overBudget(rel, `more than ${MAX_CORE_TOTAL_BYTES} bytes in all`);
      this.totalBytes += n;
      const bytes = Buffer.from(buf.subarray(0, n));
      const file: CoreFile = { rel, real: r.real, bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
      this.files.set(rel, file);
      return file;
    } catch (err) {
      this.issue(rel, `could not be read (${errCode(err)}); make it a readable regular file`);
      return null;
    } finally {
      await handle?.close();
    }
  }

  /** Entries of a directory, sorted by name, each resolved through symlinks (refused when leading outside). */
  async list(rel: string, missing: string | null): Promise<CoreDirEntry[] | null> {
    const r = await this.resolve(rel);
    if (r.kind === 'missing') {
      if (missing !== null) this.issue(rel, missing);
      return null;
    }
    if (r.kind === 'refused') return null;
    if (!r.isDir) {
      this.issue(rel, 'must be a directory; replace the file with a directory');
      return null;
    }
    let names: string[];
    try {
      names = (await fs.readdir(r.real)).sort();
    } catch (err) {
      this.issue(rel, `could not be listed (${errCode(err)}); make it a readable directory`);
      return null;
    }
    const out: CoreDirEntry[] = [];
    for (const name of names) {
      const childRel = `${rel}/${name}`;
      const c = await this.resolve(childRel);
      if (c.kind !== 'found') continue;
      out.push({ name, rel: childRel, kind: c.isFile ? 'file' : c.isDir ? 'dir' : 'other' });
    }
    return out;
  }

  /** Reads every file below a directory (hidden ones too: code may import them), depth-bounded. */
  async readTree(rel: string, depth = 0, seen: Set<string> = new Set(), folder?: Folder): Promise<void> {
    const real = await this.realPath(rel);
    if (real === null || seen.has(real)) return;
    seen.add(real);
    if (depth > MAX_TOOL_DIR_DEPTH) {
      this.issue(rel, `is nested more than ${MAX_TOOL_DIR_DEPTH} directories deep; flatten the tool's files`);
      return;
    }
    const entries = await this.list(rel, null);
    for (const e of entries ?? []) {
      if (folder && !(await this.staysInFolder(e.rel, folder))) continue;
      if (e.kind === 'dir') await this.readTree(e.rel, depth + 1, seen, folder);
      else if (e.kind === 'file') await this.readFolderFile(e.rel, folder);
      else this.issue(e.rel, 'is neither a file nor a directory (socket, FIFO or device); remove it from the core');
    }
  }

  /**
   * Reads a tool's folder: like readTree, and every entry must stay in the folder. A tool host is
   * given its folder (a bind, a read grant): a symlink out of it, or a second name of a file
   * elsewhere (a hard link), would hand it a file it was not given, such as a core's secret.
   */
  async readFolder(rel: string): Promise<void> {
    const real = await this.realPath(rel);
    if (real === null) return;
    this.folders.push(rel);
    await this.readTree(rel, 0, new Set(), { rel, real });
  }

  /**
   * A core file outside a tool folder (agent.yaml, agent/mcp/*.yaml) may not be a link out of its
   * own folder: the loader would read, and its errors could quote, a file the author only pointed at.
   * Inside a tool folder the folder is the bound (readFolder).
   */
  private async staysInOwnFolder(rel: string, real: string): Promise<boolean> {
    if (this.folders.some((f) => rel.startsWith(`${f}/`))) return true;
    const parentRel = path.posix.dirname(rel);
    const parentReal = parentRel === '.' ? this.root : await this.realPath(parentRel);
    if (parentReal === null || isInside(parentReal, real)) return true;
    this.issue(rel, `is a symlink to ${await this.linkText(rel, real)} (${path.relative(this.root, real)} in the core), outside its folder ${parentRel === '.' ? 'the core root' : `${parentRel}/`}; copy the file in instead of linking it`);
    return false;
  }

  /** What a link says (or, when a directory on the way is the link, where it resolves). */
  private async linkText(rel: string, real: string): Promise<string> {
    try {
      return await fs.readlink(path.join(this.root, ...rel.split('/')));
    } catch {
      return real;
    }
  }

  /** False (with an issue naming the link and its target) when `rel` resolves outside the folder. */
  private async staysInFolder(rel: string, folder: Folder): Promise<boolean> {
    const real = await this.realPath(rel);
    if (real === null || isInside(folder.real, real)) return true;
    this.issue(rel, `is a symlink to ${await this.linkText(rel, real)} (${path.relative(this.root, real) || '.'} in the core), outside the tool folder ${folder.rel}/; a tool is given only its own folder, so copy the file into ${folder.rel}/ instead of linking it`);
    return false;
  }

  /** Reads a file of a folder; one with more than one name (a hard link) is refused. */
  private async readFolderFile(rel: string, folder: Folder | undefined): Promise<void> {
    const file = await this.read(rel, null);
    if (!folder || file === null) return;
    try {
      const st = await fs.stat(file.real);
      if (st.nlink > 1) {
        this.issue(rel, `is a hard link (one of ${st.nlink} names of the same file), so the tool could read whatever the other names hold; replace it with a copy (cp --remove-destination <source> ${rel})`);
      }
    } catch (err) {
      this.issue(rel, `could not be inspected (${errCode(err)}); make it readable`);
    }
  }

  /** Records a file-level issue once (a path can be resolved by several checks). */
  issue(rel: string, message: string): void {
    const key = `${rel}\0${message}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.issues.push({ file: rel, field: '', message });
  }

  private async resolve(rel: string, opts: { quiet?: boolean } = {}): Promise<Resolved> {
    const abs = path.join(this.root, ...rel.split('/'));
    let real: string;
    try {
      real = await fs.realpath(abs);
    } catch (err) {
      if (errCode(err) === 'ENOENT' || errCode(err) === 'ENOTDIR') return { kind: 'missing' };
      if (!opts.quiet) this.issue(rel, `could not be resolved (${errCode(err)}); fix or remove the link`);
      return { kind: 'refused' };
    }
    if (!isInside(this.root, real)) {
      if (!opts.quiet) this.issue(rel, `is a symlink to ${real}, outside the core; symlinks must stay inside the core, so copy the files in instead of linking`);
      return { kind: 'refused' };
    }
    try {
      const st = await fs.stat(real);
      return { kind: 'found', real, isFile: st.isFile(), isDir: st.isDirectory() };
    } catch (err) {
      if (!opts.quiet) this.issue(rel, `could not be inspected (${errCode(err)}); make it readable`);
      return { kind: 'refused' };
    }
  }

  private tooBig(rel: string, size: number): null {
    this.issue(rel, `is ${size} bytes, over the ${MAX_CORE_FILE_BYTES}-byte (256 KiB) limit for a core file; shrink it or keep large data outside the core`);
    return null;
  }

  private overBudget(rel: string, what: string): null {
    if (!this.budgetReported) {
      this.budgetReported = true;
      this.issue(rel, `the core holds ${what} (limit ${MAX_CORE_FILES} files, ${MAX_CORE_TOTAL_BYTES} bytes); remove files from agent/tools or bundle a tool's code`);
    }
    return null;
  }
}

function errCode(err: unknown): string {
  return (err as NodeJS.ErrnoException | null)?.code ?? (err instanceof Error ? err.message : String(err));
}
