import { getCurrentWebviewWindow, type WebviewWindow } from '@tauri-apps/api/webviewWindow';

/** What a generated event (src/bindings.ts) offers to listen with. */
interface Listenable<T> {
  listen: (cb: (e: { payload: T }) => void) => Promise<() => void>;
}

/** An event the shell sends to one window (`emit_to`: push-to-talk, a drop, a link to open), heard by this window
 *  only. The generated `listen` is the global one, which hears what is sent to every window: with the Quick Ask panel
 *  open, push-to-talk reached both pages, both started recording, and the panel's stop found nothing to stop. Outside
 *  a Tauri webview (unit tests without a mocked window) the global one. */
export function here<T>(ev: Listenable<T> & ((w: WebviewWindow) => Listenable<T>)): Listenable<T> {
  let w: WebviewWindow;
  try {
    w = getCurrentWebviewWindow();
  } catch {
    return ev;
  }
  return ev(w);
}
