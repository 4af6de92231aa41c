import type { EngineEvent, UiEvent } from '../../bindings';

/**
 * Joins the shell's `message_append` events (src-tauri/src/delta.rs: a streamed reply's new tail, instead of its
 * whole text on every edit) back into the engine's `message` events, so that everything above the backend sees the
 * engine's model unchanged. One per channel: it holds the text of the replies still streaming.
 */
export class StreamJoiner {
  private texts = new Map<string, string>();

  join(ev: UiEvent): EngineEvent {
    if (ev.event === 'message_append') {
      // The shell only sends a tail after the text it continues, on the same channel (ordered).
      const text = (this.texts.get(ev.id) ?? '') + ev.append;
      this.remember(ev.id, text, ev.final);
      const out: EngineEvent = { event: 'message', id: ev.id, text, final: ev.final };
      if (ev.reply_to != null) out.reply_to = ev.reply_to;
      if (ev.session != null) out.session = ev.session;
      return out;
    }
    if (ev.event === 'message') this.remember(ev.id, ev.text, ev.final);
    return ev;
  }

  private remember(id: string, text: string, final: boolean): void {
    if (final) this.texts.delete(id);
    else this.texts.set(id, text);
  }
}
