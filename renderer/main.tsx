// Boots the app: the transport (the desktop app's preload, or HTTP in a browser),
// the store following the agent, and the window's theme.
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { connect, createStore } from './store/index.js';
import { StoreContext } from './store/context.js';
import { httpTransport } from './transport/http.js';
import { applyTheme } from './theme.js';

const store = createStore(httpTransport());
connect(store);
applyTheme(localStorage.getItem('ferry.theme') ?? 'system');
createRoot(document.getElementById('root')!).render(
  <StoreContext.Provider value={store}>
    <App />
  </StoreContext.Provider>,
);
