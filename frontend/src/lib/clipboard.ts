// Copying text where the page is: the Clipboard API in a secure context (HTTPS, localhost), else the older
// copy command on a selected, hidden text area (a plain-HTTP address on a network). True only when the
// text really went to the clipboard, so the page never says "Copied" for nothing.

export async function copyText(text: string): Promise<boolean> {
  if (window.isSecureContext && navigator.clipboard) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // refused (no permission, the document not focused): try the copy command
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  const focused = document.activeElement as HTMLElement | null;
  document.body.append(area);
  area.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
    focused?.focus({ preventScroll: true });
  }
}
