"""What one request may cost the server, whoever sends it (the third hostile probe): a PDF made to be slow to
open is checked in a process of its own and refused after FILE_CHECK_SECONDS while other visitors are served;
a body is measured before it is decoded; the files of a long conversation are read once per answer and sent
to the model within FILE_PROMPT_BYTES."""

from __future__ import annotations

import asyncio
import logging

import httpx
from helpers import serving
from test_attachments import file_part, pdf, with_files


def slow_pdf(pages: int = 120_000, per_node: int = 1_000) -> bytes:
    """The probe's PDF: a page tree of `pages` pages whose cross-reference table points every object at the same
    wrong offset, so a reader rebuilds it object by object (and warns for each)."""
    groups = pages // per_node
    first_node, first_page = 3, 3 + groups
    nodes = b" ".join(b"%d 0 R" % (first_node + g) for g in range(groups))
    parts = [b"%PDF-1.4\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n"]
    parts.append(b"2 0 obj <</Type/Pages/Count %d/Kids [%s]>> endobj\n" % (pages, nodes))
    for g in range(groups):
        kids = b" ".join(b"%d 0 R" % (first_page + g * per_node + i) for i in range(per_node))
        parts.append(b"%d 0 obj <</Type/Pages/Count %d/Kids [%s]>> endobj\n" % (first_node + g, per_node, kids))
    parts.extend(b"%d 0 obj <</Type/Page>> endobj\n" % (first_page + i) for i in range(pages))
    body, size = b"".join(parts), first_page + pages
    xref = b"xref\n0 %d\n0000000000 65535 f \n" % size + b"0000000009 00000 n \n" * (size - 1)
    return body + xref + b"trailer <</Root 1 0 R/Size %d>>\nstartxref\n%d\n%%%%EOF\n" % (size, len(body))


def chained_pdf(links: int = 20_000) -> bytes:
    """A PDF whose page tree is reached through `links` indirect references, each naming the next."""
    parts = [b"%PDF-1.4\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n"]
    parts.extend(b"%d 0 obj %d 0 R endobj\n" % (2 + i, 3 + i) for i in range(links))
    parts.append(b"%d 0 obj <</Type/Pages/Count 0/Kids []>> endobj\n" % (2 + links))
    return b"".join(parts) + b"trailer <</Root 1 0 R>>\n%%EOF\n"


async def test_a_pdf_made_to_be_slow_is_refused_in_time_while_others_are_served(make_settings, caplog):
    caplog.set_level(logging.WARNING)
    pdf_type = {"content-type": "application/pdf"}
    with serving(make_settings(file_check_seconds=2)) as base:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            upload = asyncio.create_task(client.post("/api/files", content=slow_pdf(), headers=pdf_type))
            await asyncio.sleep(0.3)  # the upload is being checked
            health = await client.get("/health")
            assert not upload.done(), "another visitor's request is answered while the PDF is still being checked"
            refused = await upload
            assert health.status_code == 200
            assert refused.status_code == 400, refused.text
            assert "not a PDF that can be read" in refused.json()["error"]["message"]
            chained = await client.post(
                "/api/chat", json=with_files(None, "read this", file_part(chained_pdf(), "application/pdf", "c.pdf"))
            )
            assert chained.status_code == 400, chained.text
            good = await client.post("/api/files", content=pdf(2), headers=pdf_type)
            assert good.status_code == 201, good.text
    assert not [record for record in caplog.records if record.name.startswith("pypdf")]
