import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { createBackend, inTauri } from './lib/backend';
import { markOnce } from './lib/util/frame';
import { platformName, uiFontState } from './lib/util/format';
import { setUtcOffsets } from './lib/util/localtime';
import { watchCaretRest } from './lib/util/caret';
import { loadLocale } from './lib/i18n/index.svelte';
import { loadPrefs } from './lib/state/app.svelte';

// the bundle runs (the bench's timelines: after the web process started and the scripts loaded)
markOnce('hermes:script');

// Before the first render: app.css picks the font stacks by platform, and on Linux by whether the font `system-ui`
// names is installed (see there why).
const platform = platformName();
document.documentElement.dataset.platform = platform;
const host = (window as { __HERMES_HOST__?: { utcOffsets?: unknown; caretRestMs?: number | null } }).__HERMES_HOST__;
const uiFont = uiFontState(platform, host);
if (uiFont) document.documentElement.dataset.uiFont = uiFont;
// the local clock, from the shell's time zone offsets (lib/util/localtime.ts: why not `Date`'s local time)
setUtcOffsets(host?.utcOffsets);
// the caret shown again where the shell stopped its blinking (lib/util/caret.ts)
watchCaretRest(host?.caretRestMs);

// Dev-only (fake backend in a plain browser): ?theme=dark and ?open=settings help take screenshots.
if (!inTauri()) {
  const q = new URLSearchParams(location.search);
  const theme = q.get('theme');
  if (theme) localStorage.setItem('hermes.prefs.v1', JSON.stringify({ theme, locale: q.get('lang') ?? 'en' }));
  else if (q.get('lang')) localStorage.setItem('hermes.prefs.v1', JSON.stringify({ locale: q.get('lang') }));
  if (q.get('open') === 'settings')
    setTimeout(() => window.dispatchEvent(new KeyboardEvent('keydown', { key: ',', ctrlKey: true })), 1200);
}

// The shell names the window this page is in (the Quick Ask panel: src-tauri/src/quick.rs); the browser demo takes
// ?view=quick.
const view =
  (window as { __HERMES_VIEW__?: string }).__HERMES_VIEW__ ??
  (!inTauri() ? new URLSearchParams(location.search).get('view') : null);

// The saved language's catalogue comes before the first render (the others are not in the page's script:
// lib/i18n), fetched while the backend starts.
const [backend] = await Promise.all([createBackend(), loadLocale(loadPrefs().locale).catch(() => null)]);
const target = document.getElementById('app')!;
const app =
  view === 'quick'
    ? mount((await import('./QuickApp.svelte')).default, { target, props: { backend } })
    : mount(App, { target, props: { backend } });

export default app;
