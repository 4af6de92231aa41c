/** Follows the system's light/dark preference: `set` now and at every change. Returns the unsubscribe function. */
export function watchSystemDark(set: (dark: boolean) => void): () => void {
  const mq = typeof window !== 'undefined' ? window.matchMedia?.('(prefers-color-scheme: dark)') : undefined;
  set(!!mq?.matches);
  const on = (e: MediaQueryListEvent) => set(e.matches);
  mq?.addEventListener?.('change', on);
  return () => mq?.removeEventListener?.('change', on);
}
