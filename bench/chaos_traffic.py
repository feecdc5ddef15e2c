"""The chaos soak's people: chats (threads, memory questions, list items through ACT), reminders and scheduled
prompts, and each person's `GET /events` kept open across every fault (bench/chaos.py)."""

from __future__ import annotations

import datetime as dt
import random
import threading
import time
import uuid
from typing import Any

import httpx

from bench.chaos_checks import Chat, Reminder, Soak, events_of
from tests.fake_llm import FakeLLM
from tests.llm_steps import Json, Reply, ToolCalls

STREAM_DEADLINE_S = 420.0  # a chat is followed this long at most (the web process gives up at 360 s)
TOPICS = ("my garden", "the sailing course", "my sister's wedding", "the new job", "our kitchen")


class Person:
    def __init__(self, soak: Soak, token: str, user: str, llm: FakeLLM, rng: random.Random) -> None:
        self.soak, self.token, self.user, self.llm, self.rng = soak, token, user, llm, rng
        self.thread_id: str | None = None
        self.headers = {"Authorization": f"Bearer {token}"}
        self.events: list[tuple[str, str, dict[str, Any]]] = []  # (id, event, data) seen on GET /events
        self.last_event_id: str | None = None

    def loop(self, stop: threading.Event) -> None:
        while not stop.is_set():
            action = self.rng.choices(("chat", "new", "question", "list", "reminder"), (40, 10, 15, 15, 10))[0]
            try:
                getattr(self, f"_{action}")()
            except httpx.HTTPError:
                with self.soak.lock:
                    self.soak.refused += 1
            stop.wait(self.rng.uniform(0.5, 3.0))

    def _chat(self) -> None:
        topic = self.rng.choice(TOPICS)
        self.chat(f"Let me tell you about {topic}: it went well today, number {self.rng.randint(1, 999)}.")

    def _new(self) -> None:
        self.thread_id = None
        self._chat()

    def _question(self) -> None:
        self.chat(f"What did I tell you about {self.rng.choice(TOPICS)}?")

    def _list(self) -> None:
        item = f"item{uuid.uuid4().hex[:10]}"
        self.llm.route_once(item, ToolCalls([("list", {"operation": "add", "name": "chaos", "items": [item]})]),
                            Json({"actions": []}), Reply(f"Added {item} to your chaos list."))
        self.chat(f"Add {item} to my chaos list", item=item)

    def _reminder(self) -> None:
        kind = "prompt" if self.rng.random() < 0.3 else "reminder"
        due = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=self.rng.uniform(10, self.soak.due_within_s))
        body = {"text": f"{kind} {uuid.uuid4().hex[:8]}", "due_at": due.isoformat().replace("+00:00", "Z"),
                "kind": kind}
        response = httpx.post(self.soak.base_url + "/reminders", json=body, headers=self.headers, timeout=30)
        if response.status_code != 201:
            with self.soak.lock:
                self.soak.refused += 1
            return
        with self.soak.lock:
            self.soak.reminders.append(Reminder(response.json()["id"], self.user, due.timestamp()))

    def chat(self, text: str, item: str | None = None) -> None:
        body: dict[str, Any] = {"text": text, **({"thread_id": self.thread_id} if self.thread_id else {})}
        started = time.monotonic()
        with httpx.Client(timeout=httpx.Timeout(30, read=60)) as client:
            try:
                with client.stream("POST", self.soak.base_url + "/chat", json=body, headers=self.headers) as response:
                    if response.status_code != 200:
                        with self.soak.lock:
                            self.soak.refused += 1
                        return
                    chat = Chat(response.headers["X-Request-ID"], self.user, self.token, started, item=item)
                    self.thread_id = response.headers.get("X-Thread-ID") or self.thread_id
                    with self.soak.lock:
                        self.soak.chats.append(chat)
                    _read(response, chat)
            except httpx.HTTPError:
                if "chat" not in locals():
                    raise  # never accepted
            while not chat.ended and time.monotonic() - started < STREAM_DEADLINE_S:
                chat.reconnects += 1
                time.sleep(1)
                headers = {**self.headers, **({"Last-Event-ID": chat.frames[-1][0]} if chat.frames else {})}
                try:
                    with client.stream("GET", f"{self.soak.base_url}/chat/{chat.request_id}/events",
                                       headers=headers) as response:
                        if response.status_code == 200:
                            _read(response, chat)
                except httpx.HTTPError:
                    continue


def _read(response: httpx.Response, chat: Chat) -> None:
    for event_id, event, data in events_of(response):
        chat.frames.append((event_id, event, data))
        if event in ("message", "error") and chat.outcome is None:
            chat.outcome, chat.reply_s, chat.message = event, time.monotonic() - chat.started, data
        if event == "done":
            chat.ended = True
            return


def listen(soak: Soak, person: Person, stop: threading.Event) -> None:
    """Keep the person's GET /events open until ``soak.listeners_stop``, resuming after the last event seen."""
    while not soak.listeners_stop.is_set():
        headers = {**person.headers, **({"Last-Event-ID": person.last_event_id} if person.last_event_id else {})}
        try:
            with httpx.Client(timeout=httpx.Timeout(10, read=20)) as client, client.stream(
                    "GET", soak.base_url + "/events", headers=headers) as response:
                if response.status_code != 200:
                    time.sleep(1)
                    continue
                for event_id, event, data in events_of(response, until=soak.listeners_stop.is_set):
                    person.events.append((event_id, event, data))
                    person.last_event_id = event_id
                    if soak.listeners_stop.is_set():
                        return
        except httpx.HTTPError:
            time.sleep(1)
