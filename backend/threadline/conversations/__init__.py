"""A conversation as data: what its checkpoint holds (`state`) and the versions of its messages (`versions`), how
an answer that did not end on its own is closed in it (`closing`), the tool calls that wait for a person's
approval (`approvals`) or for the page (`browser_calls`), the files it carries (`attachments`, `pdf_pages`), and
the `UIMessage` view a page reloads (`history`). What keeps it is storage/."""

__all__ = ["approvals", "attachments", "browser_calls", "closing", "history", "pdf_pages", "state", "versions"]
