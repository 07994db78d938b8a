// Light, dark, or the system's: the page's colours follow `prefers-color-scheme` unless the person picks one,
// which is kept in this browser (styles.css reads it as <html data-theme>).
export type Theme = 'system' | 'light' | 'dark';

const KEY = 'threadline-theme';

export function savedTheme(): Theme {
  const saved = localStorage.getItem(KEY);
  return saved === 'light' || saved === 'dark' ? saved : 'system';
}

export function applyTheme(theme: Theme): void {
  if (theme === 'system') {
    delete document.documentElement.dataset.theme;
    localStorage.removeItem(KEY);
  } else {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem(KEY, theme);
  }
}
