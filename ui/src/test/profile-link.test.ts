// A profile form filled from a hermes://connect link says so and names the host the link points at, before the user
// types a token into it (the link itself never carries one).
import { describe, expect, it } from 'vitest';
import { screen, within } from '@testing-library/svelte';
import { renderApp } from './helpers';

async function form() {
  const h = await screen.findByRole('heading', { name: 'New agent' });
  return h.closest('form') as HTMLElement;
}

describe('a profile form from a hermes:// link', () => {
  it.each([
    ['wss://agent.example.com:8443/ws', 'agent.example.com:8443'],
    // user info before the host is not the host
    ['wss://my-agent.example.com@evil.example/ws', 'evil.example'],
    // a look-alike international name is shown as its real, punycode form
    ['wss://p\u0430ypal.com/ws', 'xn--pypal-4ve.com'],
  ])('%s names host %s', async (url, host) => {
    await renderApp({ info: { pendingLink: { url, name: 'Work' } } });
    const f = await form();
    const note = within(f).getByRole('note');
    expect(note).toHaveTextContent(`From a link: host ${host} — check before you add your token`);
  });

  it('a form the user opened has no such note', async () => {
    await renderApp();
    expect(screen.queryByText(/From a link/)).toBeNull();
  });
});
