// An answer's text as Markdown: GitHub's flavour (tables, task lists, strikethrough), code highlighted with
// its language named and a copy button, and, while it streams, unfinished marks closed (remend) so a half-
// written `**bold` or link does not flicker. Raw HTML is shown as text, never run.
import { memo, type ReactNode, useRef } from 'react';
import Markdown, { type Components } from 'react-markdown';
import rehypeHighlight from 'rehype-highlight';
import remarkGfm from 'remark-gfm';
import remend from 'remend';
import { CopyButton } from './CopyButton';
import type { PluggableList } from 'unified';

/** A code block: its language, a copy button, and its text in a region the keyboard can scroll. */
function CodeBlock({ children }: { children?: ReactNode }) {
  const pre = useRef<HTMLPreElement>(null);
  const code = Array.isArray(children) ? children[0] : children;
  const className = (code as { props?: { className?: string } } | undefined)?.props?.className ?? '';
  const language = /language-([\w+#-]+)/.exec(className)?.[1];
  return (
    <figure className="code-block" data-testid="code-block">
      <figcaption>
        <span data-testid="code-language">{language ?? 'text'}</span>
        <CopyButton
          text={() => pre.current?.textContent ?? ''}
          label="Copy code"
          className="copy-code"
          testId="copy-code"
        />
      </figcaption>
      <pre ref={pre} tabIndex={0} aria-label={`Code${language ? ` (${language})` : ''}`}>
        {children}
      </pre>
    </figure>
  );
}

// An image in an answer is shown as a link, never loaded: a prompt-injected answer could otherwise send
// the conversation to any host in an image URL the browser fetches by itself.
const components: Components = {
  a: ({ children, href }) => (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  ),
  img: ({ src, alt }) => (
    <a className="image-link" href={typeof src === 'string' ? src : undefined} target="_blank" rel="noopener noreferrer">
      {`Image: ${alt || src}`}
    </a>
  ),
  pre: ({ children }) => <CodeBlock>{children}</CodeBlock>,
  input: ({ type, checked }) =>
    type === 'checkbox' ? (
      <input type="checkbox" checked={Boolean(checked)} disabled aria-label={checked ? 'Done' : 'Not done'} />
    ) : null,
  table: ({ children }) => (
    <div className="table-scroll" tabIndex={0} role="region" aria-label="Table">
      <table>{children}</table>
    </div>
  ),
};

const REMARK: PluggableList = [remarkGfm];
const REHYPE: PluggableList = [[rehypeHighlight, { detect: false }]]; // a fence's language, never a guess

/** Parsed again only when the text changes: while an answer streams, only its last text part does. */
export const MarkdownText = memo(function MarkdownText({ text, streaming }: { text: string; streaming: boolean }) {
  return (
    <Markdown remarkPlugins={REMARK} rehypePlugins={REHYPE} components={components}>
      {streaming ? remend(text) : text}
    </Markdown>
  );
});
