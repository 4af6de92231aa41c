import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { CONV, PROFILE, composer, ready, renderApp } from './helpers';

// The composer's text is a draft kept per conversation in the store (get_draft / set_draft): switching
// conversations, quitting or a crash loses nothing.
function draftStore(initial: Record<string, string> = {}) {
  const drafts = new Map(Object.entries(initial));
  const writes: [string, string][] = [];
  return {
    drafts,
    writes,
    handlers: {
      get_draft: (a: Record<string, unknown>) => drafts.get(a.conversationId as string) ?? null,
      set_draft: (a: Record<string, unknown>) => {
        const id = a.conversationId as string;
        const text = a.text as string;
        writes.push([id, text]);
        if (text.trim()) drafts.set(id, text);
        else drafts.delete(id);
        return null;
      },
    },
  };
}

const V3 = { ...PROFILE, dialect: 'v3' as const };
const ONE = { ...CONV, id: 'c1', title: 'Trip plans', session: '6b2c7f2e-6b1a-4a8e-9c55-1f7b1d0e2a31' };
const TWO = { ...CONV, id: 'c2', title: 'Taxes', session: '0d7f3c1e-2b4a-4c8e-9a55-3f7b1d0e2a99', updatedAt: Date.parse('2024-05-01T10:00:00Z') };

describe('drafts', () => {
  it('the stored draft is in the field when the app opens', async () => {
    const store = draftStore({ c1: 'where was I…' });
    await renderApp({ handlers: store.handlers });
    await waitFor(() => expect(composer().value).toBe('where was I…'));
  });

  it('survive switching to another conversation and back, each its own', async () => {
    const store = draftStore();
    await renderApp({ profiles: [V3], conversations: [ONE, TWO], handlers: store.handlers });
    await waitFor(() => expect(composer()).toBeInTheDocument());
    await fireEvent.input(composer(), { target: { value: 'a half-written question' } });

    await fireEvent.click(await screen.findByText('Taxes'));
    // saved at once when the conversation changes (no wait for the debounce)
    expect(store.drafts.get('c1')).toBe('a half-written question');
    await waitFor(() => expect(composer().value).toBe(''));
    await fireEvent.input(composer(), { target: { value: 'receipts for 2024' } });

    await fireEvent.click(await screen.findByText('Trip plans'));
    await waitFor(() => expect(composer().value).toBe('a half-written question'));
    expect(store.drafts.get('c2')).toBe('receipts for 2024');
    await fireEvent.click(await screen.findByText('Taxes'));
    await waitFor(() => expect(composer().value).toBe('receipts for 2024'));
  });

  it('is saved shortly after typing stops, and cleared when the message is sent', async () => {
    const store = draftStore();
    const ipc = await renderApp({ handlers: store.handlers });
    await ready(ipc);
    await fireEvent.input(composer(), { target: { value: 'typed, then the app crashed' } });
    await waitFor(() => expect(store.drafts.get('c1')).toBe('typed, then the app crashed'));
    await fireEvent.keyDown(composer(), { key: 'Enter' });
    await waitFor(() => expect(ipc.commands('text')).toHaveLength(1));
    expect(store.drafts.has('c1')).toBe(false);
    expect(store.writes.at(-1)).toEqual(['c1', '']);
  });

  it('what the user typed before the stored draft arrived is kept, not replaced', async () => {
    let release: (v: string) => void = () => {};
    const late = new Promise<string>((r) => (release = r));
    await renderApp({ handlers: { get_draft: () => late, set_draft: () => null } });
    await waitFor(() => expect(composer()).toBeInTheDocument());
    await fireEvent.input(composer(), { target: { value: 'new words' } });
    release('an old draft');
    await new Promise((r) => setTimeout(r, 50));
    expect(composer().value).toBe('new words');
  });
});

describe('drafts in the sidebar', () => {
  const line = (title: string) =>
    (within(document.querySelector('.convs') as HTMLElement).getByText(title).closest('button') as HTMLElement).querySelector('.preview')?.textContent?.trim();

  it('a conversation that is not open shows its draft instead of its last message', async () => {
    const store = draftStore({ c2: 'receipts for 2024' });
    await renderApp({
      profiles: [V3],
      conversations: [
        { ...ONE, preview: 'see you there' },
        { ...TWO, preview: 'the refund came', draft: 'receipts for 2024' },
      ],
      handlers: store.handlers,
    });
    await waitFor(() => expect(line('Taxes')).toBe('Draft: receipts for 2024'));
    expect(line('Trip plans')).toBe('see you there'); // the open one: its draft, if any, is in the composer

    await fireEvent.input(composer(), { target: { value: 'pack the tent' } });
    await fireEvent.click(within(document.querySelector('.convs') as HTMLElement).getByText('Taxes'));
    await waitFor(() => expect(line('Trip plans')).toBe('Draft: pack the tent'));
    await waitFor(() => expect(line('Taxes')).toBe('the refund came')); // open now: the draft went to the composer
    await waitFor(() => expect(composer().value).toBe('receipts for 2024'));
  });
});
