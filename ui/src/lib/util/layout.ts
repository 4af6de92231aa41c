// The page's width when it was last on screen, for the first render of a window built hidden (its page is 0×0 until
// the window is mapped). Only a change of layout is written: a drag across a breakpoint, not every resize event.

const KEY = 'hermes.layoutWidth';
/** Below it the sidebar is a drawer. */
export const NARROW_BELOW = 1000;
/** From it the avatar pane fits beside the conversation. */
export const AVATAR_FROM = 1100;
/** The main window's width as built (tauri.conf.json), for a page that was never seen. */
const BUILT_WIDTH = 1100;

const layoutOf = (w: number) => (w < NARROW_BELOW ? 0 : w < AVATAR_FROM ? 1 : 2);

function stored(): number {
  try {
    const w = Number(localStorage.getItem(KEY));
    return Number.isFinite(w) && w > 0 ? w : 0;
  } catch {
    return 0;
  }
}

export function lastSeenWidth(): number {
  return stored() || BUILT_WIDTH;
}

export function rememberWidth(width: number): void {
  if (!(width > 0)) return;
  const was = stored();
  if (was && layoutOf(was) === layoutOf(width)) return;
  try {
    localStorage.setItem(KEY, String(Math.round(width)));
  } catch {
    // (no storage: the next hidden start lays out for the built width)
  }
}
