import './lib/zod-without-eval'; // first: before the AI SDK's schemas are made
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { SharedConversation } from './components/SharedConversation';
import { applyTheme, savedTheme } from './lib/theme';
import './styles.css';

applyTheme(savedTheme()); // before the first paint: no flash of the other theme

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');

// /share/{id} is a conversation someone shared: shown read-only, without the app around it.
const shared = /^\/share\/([A-Za-z0-9_-]+)$/.exec(window.location.pathname);

createRoot(root).render(
  <StrictMode>{shared ? <SharedConversation shareId={shared[1]} /> : <App />}</StrictMode>,
);
