import DOMPurify from 'dompurify';

/** hljs output is escaped HTML with <span class>; anything else is dropped. */
export function sanitizeHighlight(html: string): string {
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS: ['span'],
    ALLOWED_ATTR: ['class'],
    ALLOW_DATA_ATTR: false,
    KEEP_CONTENT: true,
  });
}
