import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor } from '@testing-library/svelte';
import { CONV, PROFILE, ready, renderApp } from './helpers';

const HIT = {
  messageId: 'm7',
  conversationId: CONV.id,
  profileId: PROFILE.id,
  snippet: 'the nightly [backup] ran long',
  createdAt: Date.UTC(2026, 10, 30, 9, 5),
  rank: -1,
};

describe('searching history from the sidebar', () => {
  it('has its own clear button (not WebKit\'s), which empties the field and keeps the focus there', async () => {
    const queries: unknown[] = [];
    const ipc = await renderApp({ handlers: { search: (a) => (queries.push(a.query), [HIT]) } });
    await ready(ipc);
    const field = screen.getByRole('searchbox', { name: 'Search messages' }) as HTMLInputElement;
    // nothing to clear yet: the shortcut hint stands where the button will be
    expect(screen.queryByRole('button', { name: 'Clear search' })).toBeNull();
    expect(field.parentElement!.querySelector('kbd')).not.toBeNull();

    await fireEvent.input(field, { target: { value: 'backup' } });
    await screen.findByText('backup', { selector: 'mark' });
    expect(queries).toEqual(['backup']);
    const clear = screen.getByRole('button', { name: 'Clear search' });
    expect(field.parentElement!.querySelector('kbd')).toBeNull();

    await fireEvent.click(clear);
    expect(field.value).toBe('');
    expect(document.activeElement).toBe(field);
    await waitFor(() => expect(screen.queryByText('backup', { selector: 'mark' })).toBeNull());
    expect(screen.queryByRole('button', { name: 'Clear search' })).toBeNull();
    expect(field.parentElement!.querySelector('kbd')).not.toBeNull();

    // Escape clears too
    await fireEvent.input(field, { target: { value: 'backup' } });
    await screen.findByRole('button', { name: 'Clear search' });
    await fireEvent.keyDown(field, { key: 'Escape' });
    expect(field.value).toBe('');
  });
});
