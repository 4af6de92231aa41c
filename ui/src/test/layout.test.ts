import { afterEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor } from '@testing-library/svelte';
import { renderApp } from './helpers';
import { lastSeenWidth, rememberWidth } from '../lib/util/layout';

// A window built hidden (a start in the tray, a Show after the webview was dropped) renders its page at 0×0: the
// first render must already have the layout the window shows a moment later.
describe('the first render of a hidden window', () => {
  const width = window.innerWidth;
  afterEach(() => {
    window.innerWidth = width;
  });

  it('a 0×0 page never seen before lays out for the built width: sidebar open, not a drawer', async () => {
    window.innerWidth = 0;
    await renderApp();
    expect(await screen.findByRole('button', { name: 'Add agent' })).toBeInTheDocument();
    expect(document.querySelector('.sidebar-slot.drawer')).toBeNull();
    // Mapped at its real size: nothing moves.
    window.innerWidth = 1100;
    await fireEvent(window, new Event('resize'));
    expect(screen.getByRole('button', { name: 'Add agent' })).toBeInTheDocument();
    expect(localStorage.getItem('hermes.layoutWidth')).toBe('1100');
  });

  it('a window last seen narrow starts as a narrow one: the sidebar a closed drawer', async () => {
    rememberWidth(820);
    window.innerWidth = 0;
    await renderApp();
    await waitFor(() => expect(screen.getByRole('button', { name: 'Show sidebar' })).toBeInTheDocument());
    expect(screen.queryByRole('button', { name: 'Add agent' })).toBeNull();
  });

  it('only a change of layout is written, not every resize', () => {
    expect(lastSeenWidth()).toBe(1100);
    rememberWidth(0);
    expect(localStorage.getItem('hermes.layoutWidth')).toBeNull();
    rememberWidth(1280);
    rememberWidth(1400);
    expect(lastSeenWidth()).toBe(1280);
    rememberWidth(1050);
    expect(lastSeenWidth()).toBe(1050);
    rememberWidth(900);
    rememberWidth(700);
    expect(lastSeenWidth()).toBe(900);
    localStorage.setItem('hermes.layoutWidth', 'garbage');
    expect(lastSeenWidth()).toBe(1100);
  });
});
