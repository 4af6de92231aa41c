import { getContext, setContext } from 'svelte';
import type { Backend } from './backend';
import { TauriBackend } from './tauri';

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

export function inTauri(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

/** Tauri in the app; the dev-only fake demo agent in a plain browser (never bundled into the Tauri path). */
export async function createBackend(): Promise<Backend> {
  if (inTauri()) return new TauriBackend();
  if (import.meta.env.DEV || import.meta.env.VITE_FAKE_BACKEND === '1') {
    const { FakeBackend } = await import('./fake');
    return new FakeBackend();
  }
  return new TauriBackend();
}
