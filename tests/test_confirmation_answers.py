"""Only a yes confirms (people22's mirela, twenty-first session): asked "please confirm: remove book from the christmas
presents list", she went on "Ok, now I go to sleep, tomorrow I start at 8." — and the "Ok" removed the book."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from services.act.models import ScheduledItem
from services.text import reply_kind
from tests.llm_steps import Reply, ToolCalls
from tests.test_act_chat import chat, message_of, person  # noqa: F401  (person: a fixture)


@pytest.mark.parametrize(("text", "kind"), [
    ("yes go ahead and remove it please", "confirm"), ("Sure, the 3pm one", "confirm"), ("ok!", "confirm"),
    ("no thanks, leave it as it is", "cancel"),
    ("Ok, now I go to sleep, tomorrow I start at 8.", None), ("ok but what time?", None),
    ("okay so I had a great day at work today with the team", None), ("No way, my sister got engaged!", None),
])
def test_an_answer_is_a_yes_or_a_no_and_little_else(text: str, kind: str | None) -> None:
    assert reply_kind(text) == kind


@pytest.mark.integration
def test_news_opened_with_ok_does_not_confirm_what_was_asked(client, run_jobs, fake_llm, db_engine, person) -> None:  # noqa: F811
    # The model gets the hour wrong: the critic asks first.
    fake_llm.script(ToolCalls([("schedule", {"operation": "create", "text": "call the dentist",
                                             "due": "tomorrow at 10"})]))
    frames, thread = chat(client, run_jobs, "Remind me tomorrow at 9 to call the dentist")
    assert message_of(frames)["text"].startswith("Before I do that, please confirm")
    fake_llm.script_stream(Reply("Sleep well!"))
    fake_llm.script(Reply("Sleep well!"))
    chat(client, run_jobs, "Ok, now I go to sleep, tomorrow I start at 8.", thread)
    with db_engine.connect() as connection:
        assert connection.execute(select(ScheduledItem)).all() == []
