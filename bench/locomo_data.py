"""LoCoMo's conversations for bench.locomo: found, read as the JSON lines ``engram import`` takes, imported.

The data (snap-research/locomo, CC BY-NC 4.0) is read from ``../shared/data/locomo-dev/`` beside the
repository, never copied into it. Each conversation becomes its own user; its questions with evidence
keep the evidence ids that name a stored turn.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from services.embeddings import Embedder
from services.memory import vocabulary
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.vectors import fill_all

ROOT = Path(__file__).resolve().parents[1]
DATA_CANDIDATES = [ROOT.parent / "shared" / "data" / "locomo-dev", ROOT.parents[1] / "shared" / "data" / "locomo-dev"]
EVIDENCE_ID = re.compile(r"D\d+:\d+")
TURN_GAP = dt.timedelta(seconds=20)  # turns of a session are minutes apart; only their order matters here


@dataclass
class Question:
    user: str
    text: str
    category: int
    evidence: set[str]
    now: dt.datetime
    answer: str = ""  # the dataset's answer ("" for adversarial questions, which have none)


def find_data(given: str | None) -> Path | None:
    candidates = [Path(given)] if given else DATA_CANDIDATES
    return next((path for path in candidates if path.is_dir() and any(path.glob("*.json"))), None)


def session_time(value: str) -> dt.datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023" as UTC."""
    return dt.datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=dt.UTC)


def conversation_lines(data: dict[str, Any]) -> list[str]:
    """The conversation as the JSON lines ``engram import`` reads (a shared image is told by its caption)."""
    lines = []
    number = 1
    while f"session_{number}" in data:
        start = session_time(data[f"session_{number}_date_time"])
        for index, turn in enumerate(data[f"session_{number}"]):
            body = turn["text"].strip()
            if turn.get("blip_caption"):
                body = f"{body} [shared an image: {turn['blip_caption']}]".strip()
            if not body:
                continue
            lines.append(json.dumps({"session": f"session_{number}", "speaker": turn["speaker"], "text": body,
                                     "timestamp": (start + index * TURN_GAP).isoformat(),
                                     "external_id": turn["dia_id"]}))
        number += 1
    return lines


def questions_of(user: str, data: dict[str, Any], known: set[str], end: dt.datetime) -> list[Question]:
    """Questions with evidence; evidence ids are cleaned ("D8:6; D9:17") and kept when the turn exists."""
    found = []
    for item in data.get("qa", []):
        evidence = {match for raw in item.get("evidence") or [] for match in EVIDENCE_ID.findall(str(raw))} & known
        if evidence:
            found.append(Question(user, item["question"], int(item["category"]), evidence, end,
                                  str(item.get("answer", ""))))
    return found


def load(sessions: sessionmaker[Session], embedder: Embedder, folder: Path) -> tuple[list[Question], float, float]:
    """Import every conversation as its own user, then backfill its vectors (the job's function, to completion);
    returns the questions, the store rate (exchanges/s) and the backfill's rate (exchanges embedded/s)."""
    questions, stored, seconds, embedded, embed_seconds = [], 0, 0.0, 0, 0.0
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        conversation = data.get("conversation", data)
        user = f"locomo-{path.stem}"
        lines, bad, _ = parse_lines(conversation_lines(conversation))
        if bad:
            raise SystemExit(f"{path}: {len(bad)} lines the importer refused, first: {bad[0]}")
        started = time.monotonic()
        report = store_records(sessions, embedder, user, pair_exchanges(lines))
        seconds += time.monotonic() - started
        stored += report.stored
        started = time.monotonic()
        embedded += fill_all(sessions, embedder, loops=os.cpu_count() or 1)  # as the job runs it
        vocabulary.fill_all(sessions, embedder)  # then the words, as the job runs it
        embed_seconds += time.monotonic() - started
        end = max(line.at for line in lines) + dt.timedelta(days=1)
        questions += questions_of(user, data, {line.external_id for line in lines if line.external_id}, end)
    return (questions, stored / seconds if seconds and stored else 0.0,
            embedded / embed_seconds if embed_seconds and embedded else 0.0)
