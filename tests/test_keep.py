"""Google Keep's notes as Google Takeout exports them (`local_rag.corpus.keep`): a ``.json`` file a note beside its
``.html`` twin, written here as Takeout writes them (compact JSON, Keep's own field names)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from local_rag.corpus.documents import UnreadableFile, read_document
from local_rag.corpus.readers import CorpusReport, read_corpus


def _keep(folder: Path, name: str, title: str, trashed: bool = False, archived: bool = False, **content: object) -> None:
    note = {"color": "DEFAULT", "isTrashed": trashed, "isPinned": False, "isArchived": archived, **content,
            "title": title, "userEditedTimestampUsec": 1762178531000000, "createdTimestampUsec": 1762178400000000}
    (folder / f"{name}.json").write_text(json.dumps(note, ensure_ascii=False, separators=(",", ":")))
    body = content.get("textContent") or "".join(f"<li>{i['text']}</li>" for i in content.get("listContent", []))
    (folder / f"{name}.html").write_text(f"<html><head><title>{title}</title></head><body><div class=\"title\">{title}"
                                         f"</div><div class=\"content\">{body}</div></body></html>")


def test_a_takeout_keep_folder_is_read_a_note_each(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """Session 57: Takeout's Keep folder was read through its HTML files (trafilatura thinned short notes; labels and
    ticks lost, notes in the trash read) and its JSON files were "skipped". Now each note's JSON is read: title,
    labels, the day it was edited, "Archived", its text or checklist ([x] ticked), its links; the HTML twins are left
    out (each note found once), notes in Keep's trash left out with a note."""
    keep = tmp_path / "Takeout" / "Keep"
    keep.mkdir(parents=True)
    _keep(keep, "Pump 4", "Pump 4", textContent="Müller replaces the north pump on Friday.",
          labels=[{"name": "Work"}], annotations=[{"description": "", "source": "WEBLINK", "title": "Runbook",
                                                   "url": "https://wiki.example.org/p4"}])
    _keep(keep, "Seals", "Seals", archived=True, listContent=[
        {"textHtml": "DN 150", "text": "DN 150", "isChecked": True}, {"textHtml": "DN 80", "text": "DN 80", "isChecked": False}])
    _keep(keep, "Old idea", "Old idea", trashed=True, textContent="A pump made of cheese.")
    (keep / "Labels.txt").write_text("Work\n")
    report = CorpusReport()
    with caplog.at_level(logging.WARNING):
        passages = {p.doc_id: p for p in read_corpus(tmp_path / "Takeout", report=report)}
    assert sorted(passages) == ["Keep/Labels.txt", "Keep/Pump 4.json", "Keep/Seals.json"]
    assert passages["Keep/Pump 4.json"].title == "Pump 4"
    assert passages["Keep/Pump 4.json"].text == ("Labels: Work\nEdited: 3 Nov 2025\n\n"
                                                 "Müller replaces the north pump on Friday.\n"
                                                 "Link: Runbook (https://wiki.example.org/p4)")
    assert passages["Keep/Seals.json"].text == "Edited: 3 Nov 2025\nArchived\n\n[x] DN 150\n[ ] DN 80"
    assert "1 note(s) in Google Keep's trash left out" in caplog.text and "skipped" not in caplog.text
    with pytest.raises(UnreadableFile, match="trash"):
        read_document(keep / "Old idea.json")
