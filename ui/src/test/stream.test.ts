import { describe, expect, it } from 'vitest';
import type { EngineEvent, UiEvent } from '../bindings';
import { StreamJoiner } from '../lib/backend/stream';

// The shell sends a streamed reply's growing edits as tails (src-tauri/src/delta.rs, A-9/A-10): the backend must
// hand the state exactly the engine's whole-text `message` events.
describe('StreamJoiner', () => {
  it('rebuilds whole texts from tails, per reply id, and passes everything else through', () => {
    const j = new StreamJoiner();
    const wire: UiEvent[] = [
      { event: 'message', id: 'a', text: 'Hel', final: false },
      { event: 'message_append', id: 'a', append: 'lo', final: false, reply_to: 'q1' },
      { event: 'message', id: 'b', text: 'other', final: false, session: 's-1' },
      { event: 'typing', on: true },
      { event: 'message_append', id: 'b', append: ' reply', final: true, session: 's-1' },
      { event: 'message_append', id: 'a', append: ', wörld 🙂', final: true },
    ];
    const got = wire.map((e) => j.join(e));
    const want: EngineEvent[] = [
      { event: 'message', id: 'a', text: 'Hel', final: false },
      { event: 'message', id: 'a', text: 'Hello', final: false, reply_to: 'q1' },
      { event: 'message', id: 'b', text: 'other', final: false, session: 's-1' },
      { event: 'typing', on: true },
      { event: 'message', id: 'b', text: 'other reply', final: true, session: 's-1' },
      { event: 'message', id: 'a', text: 'Hello, wörld 🙂', final: true },
    ];
    expect(got).toEqual(want);
  });

  it('a whole message replaces what it had (a rewrite), and a finished reply is forgotten', () => {
    const j = new StreamJoiner();
    j.join({ event: 'message', id: 'a', text: 'Draft', final: false });
    j.join({ event: 'message', id: 'a', text: 'Rewritten', final: false });
    expect(j.join({ event: 'message_append', id: 'a', append: '!', final: true })).toMatchObject({ text: 'Rewritten!' });
    // after final, the shell sends the id whole again; a stray tail cannot resurrect old text
    expect(j.join({ event: 'message_append', id: 'a', append: 'x', final: true })).toMatchObject({ text: 'x' });
  });
});
