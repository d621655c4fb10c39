// Boots the app: the transport (the desktop app's preload, or HTTP in a browser),
// the store following the agent, and the window's theme.
import { createRoot } from 'react-dom/client';
// The colours, type, spacing, radii and focus ring shared with the service's pages (src/format/tokens.ts).
import 'virtual:ferry-tokens.css';
import { App } from './App.js';
import { connect, createStore } from './store/index.js';
import { StoreContext } from './store/context.js';
import { httpTransport } from './transport/http.js';
import { electronTransport, type FerryBridge } from './transport/electron.js';
import { applyTheme } from './theme.js';

// In the desktop app the preload gives window.ferry; a browser talks HTTP to the agent that served the page.
const bridge = (window as { ferry?: FerryBridge }).ferry;
const transport = bridge ? electronTransport(bridge) : httpTransport();
const store = createStore(transport);
connect(store);
// The desktop app hands over Links it was opened with (ferry://, a Link URL, a second start), and its update's state.
transport.onDesktop?.('app.receive', (p) => store.getState().openLink(p.url));
transport.onDesktop?.('app.update', (update) => store.setState({ update }));
applyTheme(localStorage.getItem('ferry.theme') ?? 'system');
createRoot(document.getElementById('root')!).render(
  <StoreContext.Provider value={store}>
    <App />
  </StoreContext.Provider>,
);
