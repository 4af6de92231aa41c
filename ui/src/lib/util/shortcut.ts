/** A global shortcut as the shell's shortcut parser reads it (`Control+Alt+Space`, `Super+Shift+KeyK`): the modifiers
 *  held, in a fixed order, then the key by its physical code (`KeyboardEvent.code`, the same on every keyboard
 *  layout). `null` while only modifiers are down, or for a key that cannot be a shortcut's (Tab, Escape alone). */
export function shortcutOf(e: Pick<KeyboardEvent, 'code' | 'ctrlKey' | 'altKey' | 'shiftKey' | 'metaKey'>): string | null {
  const code = e.code;
  if (!code || /^(Control|Alt|Shift|Meta|OS)(Left|Right)?$/.test(code)) return null;
  if (code === 'Tab' || code === 'Escape') return null;
  const mods = [e.ctrlKey && 'Control', e.altKey && 'Alt', e.shiftKey && 'Shift', e.metaKey && 'Super'].filter(
    (m): m is string => !!m,
  );
  // a global shortcut without a modifier would take that key from every app (function keys excepted)
  if (mods.length === 0 && !/^F\d{1,2}$/.test(code)) return null;
  return [...mods, code].join('+');
}
