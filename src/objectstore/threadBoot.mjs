// Entry of the store's thread when Ferry runs from its TypeScript sources:
// threads do not inherit the main thread's tsx, so load it before the store.
import { register } from 'tsx/esm/api';

register();
await import('./threadMain.ts');
