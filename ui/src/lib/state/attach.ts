import { errorMessage, toBackendError } from '../backend';
import type { FileInfo } from '../backend/types';
import { t } from '../i18n/index.svelte';

/** What became of files offered to the composer (dropped, picked or pasted). The page knows each by the token the
 *  shell handed out for it (src-tauri/src/grants.rs), which ends in `/` and the file's name. */
export interface Staged {
  /** The files that can be attached, in the order they were offered. */
  files: FileInfo[];
  /** One sentence for each file that cannot be, naming it and saying why (a folder, a missing or unreadable file). */
  refused: string[];
}

/** The last part of a token or a path (a dropped folder's name), whatever the platform's separator. */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]+/).filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

/** Why `name` cannot be attached, for the person who dropped it. */
export function refusal(name: string, e: unknown): string {
  const err = toBackendError(e);
  switch (err.code) {
    case 'is_folder':
      return t('attach.folder', { name });
    case 'not_found':
      return t('attach.missing', { name });
    case 'permission_denied':
      return t('attach.unreadable', { name });
    default:
      return t('attach.failed', { name, reason: errorMessage(err) });
  }
}

/**
 * Asks the shell about every file at once (a drop of many files is not a queue of round trips) and sorts them into
 * files to attach and refusals. Tokens in `skip` (already attached) are left out: the shell hands out one token per
 * file, so the same file dropped twice is attached once.
 */
export async function stagePaths(
  paths: string[],
  fileInfo: (path: string) => Promise<FileInfo>,
  skip: Iterable<string> = [],
): Promise<Staged> {
  const seen = new Set(skip);
  const fresh = paths.filter((p) => !seen.has(p) && (seen.add(p), true));
  const results = await Promise.allSettled(fresh.map((p) => fileInfo(p)));
  const staged: Staged = { files: [], refused: [] };
  results.forEach((r, i) => {
    if (r.status === 'fulfilled') staged.files.push(r.value);
    else staged.refused.push(refusal(baseName(fresh[i]), r.reason));
  });
  return staged;
}
