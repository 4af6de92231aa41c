/** How a received file's name is shown: never cut at the end (the extension says what the file is), and flagged
 *  when it tries to pass for another type. The shell has already removed invisible characters from names it
 *  wrote; these checks hold for any name the page is given. */

/** Characters that reorder or hide what follows (bidi controls, zero-width ones, the BOM, the soft hyphen). */
const HIDING = /[\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/u;
/** A run of spaces long enough to push the real extension out of sight. */
const SPACE_RUN = /[\s\u00A0\u2000-\u200A\u202F\u205F\u3000]{3,}/u;
/** Compound extensions that are one type, not a disguise. */
const COMPOUND = new Set(['tar.gz', 'tar.bz2', 'tar.xz', 'tar.zst', 'tar.lz', 'tar.br']);
/** The inner extensions a disguise borrows: a document, picture, sound, video or archive. */
const DISGUISE = new Set(
  'pdf doc docx xls xlsx ppt pptx odt ods txt rtf csv md jpg jpeg png gif webp bmp heic mp3 wav ogg m4a mp4 mov avi mkv webm zip rar 7z'.split(
    ' ',
  ),
);

/** The name's last extension, lowercased, without the dot; '' when it has none. */
export function extensionOf(name: string): string {
  const i = name.lastIndexOf('.');
  return i > 0 ? name.slice(i + 1).trim().toLowerCase() : '';
}

export interface NameFlags {
  /** `report.pdf.exe`: the name shows one type (`inner`) and ends in another (`outer`). */
  doubleExt: { inner: string; outer: string } | null;
  /** Invisible or reordering characters, or a long run of spaces, in the name. */
  hiddenExt: boolean;
}

export function nameFlags(name: string): NameFlags {
  const parts = name.split('.');
  let doubleExt: NameFlags['doubleExt'] = null;
  if (parts.length >= 3) {
    const outer = parts[parts.length - 1].trim().toLowerCase();
    const inner = parts[parts.length - 2].trim().toLowerCase();
    if (DISGUISE.has(inner) && outer !== inner && !COMPOUND.has(`${inner}.${outer}`)) doubleExt = { inner, outer };
  }
  return { doubleExt, hiddenExt: HIDING.test(name) || SPACE_RUN.test(name) };
}

/** `name` in at most `max` characters, cut in the middle: the start and the end with the full extension stay. */
export function middleCut(name: string, max = 40): string {
  const chars = Array.from(name);
  if (chars.length <= max) return name;
  const ext = extensionOf(name);
  const keep = max - 1;
  const tail = Math.min(keep - 4, Math.max(ext.length + 5, Math.floor(keep / 2)));
  return chars.slice(0, keep - tail).join('') + '…' + chars.slice(chars.length - tail).join('');
}
