import { getContext, setContext } from 'svelte';
import type { Backend } from './backend';
import { tauriBackend } from './tauri';

export type { Backend } from './backend';
export { BackendError, errorMessage, toBackendError } from './backend';
export * from './types';

const KEY = Symbol('backend');

export function setBackend(b: Backend): Backend {
  setContext(KEY, b);
  return b;
}

/** A context holding only the backend, for components mounted outside the app's tree. */
export function backendContext(b: Backend): Map<unknown, unknown> {
  return new Map([[KEY, b]]);
}

export function getBackend(): Backend {
  const b = getContext<Backend | undefined>(KEY);
  if (!b) throw new Error('Backend missing from context');
  return b;
}

/** The browser demo's fake shell answers the IPC (it sets `__TAURI_INTERNALS__` too). */
let demo = false;

/** Running in the app's webview (not the browser demo). */
export function inTauri(): boolean {
  return !demo && typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

/** The generated backend. In a plain browser (dev, or a build with VITE_FAKE_BACKEND=1) its IPC is answered by the
 *  fake shell with the scripted demo agent (`?demo=…` picks a scenario); that code is never bundled otherwise. */
export async function createBackend(): Promise<Backend> {
  if (!inTauri() && (import.meta.env.DEV || import.meta.env.VITE_FAKE_BACKEND === '1')) {
    const { demoShell, bridgeDomDrops } = await import('./demo-agent');
    const shell = demoShell(new URLSearchParams(location.search).get('demo') ?? '');
    shell.install().installWindow();
    bridgeDomDrops(shell);
    demo = true;
  }
  return tauriBackend();
}
