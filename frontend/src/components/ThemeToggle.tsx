// The colour theme: the system's, light or dark, one click each.
import { useState } from 'react';
import { applyTheme, savedTheme, type Theme } from '../lib/theme';

const NEXT: Record<Theme, Theme> = { system: 'light', light: 'dark', dark: 'system' };
const LABEL: Record<Theme, string> = { system: 'Theme: system', light: 'Theme: light', dark: 'Theme: dark' };

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(savedTheme);
  return (
    <button
      type="button"
      className="theme-toggle"
      data-testid="theme-toggle"
      title="Switch between the system's, light and dark colours"
      onClick={() => {
        const next = NEXT[theme];
        applyTheme(next);
        setTheme(next);
      }}
    >
      {LABEL[theme]}
    </button>
  );
}
