// What a few of Hermes's standard texts mean to the app. The agent's words are untrusted: these only decide whether
// to offer help or an action, never what is run.

/** A reply about pairing: Hermes answers an unapproved device's first message with a pairing code ("Here's
 *  your pairing code: …", "hermes pairing approve …"), and with "Too many pairing requests" when it has too many.
 *  Such a reply is no sign that the device is approved. */
export function isPairingReply(text: string): boolean {
  return /\bpairing\b/i.test(text);
}

/** Hermes's reminder that no home channel is set (spec §10): `/sethome` in this chat makes it the home channel. */
export function isHomeReminder(text: string): boolean {
  return /no home channel is set/i.test(text);
}

/** What an access denial's reason points at: the device (not approved), the token, or either. */
export function denialCause(reason: string): 'device' | 'token' | 'both' {
  if (/device|pair|approv/i.test(reason)) return 'device';
  if (/token|auth|401|jwt/i.test(reason)) return 'token';
  return 'both';
}
