/**
 * The text caret at rest (Linux). After a while without input the shell stops the caret's blinking
 * (src-tauri/src/caret.rs: each blink was a repaint, most of what a visible, idle window cost); WebKit may stop it in
 * the "off" half of a blink, which would leave no caret on screen. So, a few seconds after the shell's rest, the
 * focused text field is given the focus again (its selection kept): WebKit then shows its caret, solid. Any key,
 * click or focus starts the wait again, as it starts the blinking again in the shell.
 */

/** How long after the shell's rest the field is refocused: WebKit takes the new setting a blink or two later. */
export const REFOCUS_AFTER_REST_MS = 3000;

export function watchCaretRest(restMs: number | null | undefined, doc: Document = document): () => void {
  if (!restMs || restMs <= 0) return () => {};
  let timer: ReturnType<typeof setTimeout> | null = null;
  let refocusing = false;
  const refocus = () => {
    timer = null;
    const el = doc.activeElement;
    if (!(el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement) || !doc.hasFocus()) return;
    // a field whose blur does something (a rename that commits on blur) keeps its focus: a caret resting in the off
    // half of its blink there is the lesser harm
    if (el.hasAttribute('data-blur-commits')) return;
    const [start, end, dir] = [el.selectionStart, el.selectionEnd, el.selectionDirection];
    refocusing = true;
    el.blur();
    el.focus({ preventScroll: true });
    refocusing = false;
    if (start !== null && end !== null) el.setSelectionRange(start, end, dir ?? undefined);
  };
  const input = () => {
    if (refocusing) return; // our own focus: no input, no new wait
    if (timer) clearTimeout(timer);
    timer = setTimeout(refocus, restMs + REFOCUS_AFTER_REST_MS);
  };
  const events = ['keydown', 'mousedown', 'focusin'] as const;
  // (capture: a handler that stops the event does not hide it from here)
  for (const e of events) doc.addEventListener(e, input, true);
  input();
  return () => {
    if (timer) clearTimeout(timer);
    for (const e of events) doc.removeEventListener(e, input, true);
  };
}
