export const DEFAULT_MAX_MEDIA_BYTES = 8 * 1024 * 1024;

export type MediaKind = 'image' | 'video' | 'audio' | 'voice' | 'document' | 'file' | 'animation' | string;

const EXT_MIME: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  m4a: 'audio/mp4',
  pdf: 'application/pdf',
  zip: 'application/zip',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
};

export function guessMime(filename: string): string | undefined {
  const ext = filename.split('.').pop()?.toLowerCase() ?? '';
  return EXT_MIME[ext];
}

/** A-18 kinds for the uplink, from the MIME type. */
export function kindFromMime(mime: string | undefined): MediaKind {
  if (!mime) return 'document';
  if (mime.startsWith('image/')) return 'image';
  if (mime.startsWith('video/')) return 'video';
  if (mime.startsWith('audio/')) return 'audio';
  return 'document';
}

/** The app's own recordings are named `voice-<ms since the epoch>[-<part>][ (<n>)].wav` (`hermes_voice::clip`). */
const RECORDING_NAME = /^voice-\d{10,}(-\d+)?( \(\d+\))?\.wav$/i;

/**
 * A voice message rather than an audio file: the agent's `voice` kind, or one of our own recordings. It is shown as
 * "Voice message · 0:03" instead of its file name.
 */
export function isVoiceNote(kind: string, filename: string): boolean {
  const k = kind.toLowerCase();
  return k === 'voice' || (k === 'audio' && RECORDING_NAME.test(filename));
}

/** How a received/sent attachment is displayed. */
export type Display = 'image' | 'audio' | 'video' | 'file';

export function displayOf(kind: string, mime?: string | null): Display {
  const k = kind.toLowerCase();
  if (k === 'image' || k === 'animation' || k === 'photo') {
    // SVG is never shown inline: it can carry script.
    if (mime === 'image/svg+xml') return 'file';
    return 'image';
  }
  if (k === 'voice' || k === 'audio') return 'audio';
  if (k === 'video') return 'video';
  if (mime?.startsWith('image/') && mime !== 'image/svg+xml' && k !== 'document') return 'image';
  return 'file';
}

export type FileIcon = 'pdf' | 'archive' | 'text' | 'code' | 'sheet' | 'image' | 'audio' | 'video' | 'generic';

export function fileIcon(filename: string, mime?: string | null): FileIcon {
  const ext = filename.split('.').pop()?.toLowerCase() ?? '';
  if (mime === 'application/pdf' || ext === 'pdf') return 'pdf';
  if (['zip', 'gz', 'tgz', 'xz', '7z', 'rar', 'tar', 'bz2'].includes(ext)) return 'archive';
  if (['csv', 'xls', 'xlsx', 'ods', 'tsv'].includes(ext)) return 'sheet';
  if (['js', 'ts', 'py', 'rs', 'go', 'java', 'c', 'cpp', 'h', 'sh', 'json', 'yaml', 'yml', 'toml', 'html', 'css'].includes(ext))
    return 'code';
  if (['txt', 'md', 'log', 'rtf', 'doc', 'docx', 'odt'].includes(ext) || mime?.startsWith('text/')) return 'text';
  if (mime?.startsWith('image/')) return 'image';
  if (mime?.startsWith('audio/')) return 'audio';
  if (mime?.startsWith('video/')) return 'video';
  return 'generic';
}

export function maxMediaBytes(capabilities: Record<string, unknown>): number {
  const v = capabilities['max_media_bytes'];
  return typeof v === 'number' && v > 0 ? v : DEFAULT_MAX_MEDIA_BYTES;
}
