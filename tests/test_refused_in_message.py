"""A refusal said in the message being answered holds its own reply (people20's rowena, twenty-first session): told
"pls dont ever recommend me horror movies ha, even the trailers", the 1.5B answered "If you're interested in horror,
I'd recommend …" — the refusal was only a fact after the chunker stored it, a turn too late."""

from __future__ import annotations

from dataclasses import replace

import pytest

from services.memory.refusals import refused_in_message
from tests.llm_steps import Reply
from tests.test_act_chat import chat, message_of, person  # noqa: F401  (person: a fixture)


@pytest.mark.parametrize(("message", "refused"), [
    ("pls dont ever recommend me horror movies ha, even the trailers.", {"horror"}),
    ("I can't stand mushrooms, what should I cook tonight?", {"mushroom"}),  # told, then asked
    ("Allergic to peanuts btw. Any snack ideas for the train?", {"peanut"}),
])
def test_what_the_message_refuses_is_read(message: str, refused: set[str]) -> None:
    assert refused <= refused_in_message(message)


@pytest.mark.parametrize("message", ["Do you like horror movies?", "What's the difference between horror and thriller?",
                                     "Suggest a film for tonight."])
def test_a_question_about_a_thing_refuses_nothing(message: str) -> None:
    assert not refused_in_message(message)


@pytest.mark.integration
@pytest.mark.usefixtures("person")
class TestCompact:
    @pytest.fixture
    def settings(self, settings):  # type: ignore[no-untyped-def]
        return replace(settings, llm_profile="compact")

    def test_the_reply_to_a_refusal_does_not_offer_the_refused_thing(self, client, run_jobs, fake_llm) -> None:
        fake_llm.script_stream(Reply("I understand. If you're interested in horror, I'd recommend The Conjuring."),
                               Reply("Got it, I'll never recommend those. Sleep well!"))
        frames, _ = chat(client, run_jobs, "pls dont ever recommend me horror movies ha, even the trailers. I watched "
                                           "Annabelle in college and couldnt sleep for one week")
        text = message_of(frames)["text"]
        assert text == "Got it, I'll never recommend those. Sleep well!" and "conjuring" not in text.lower()

    def test_a_dinner_asked_for_after_a_refusal_leaves_it_out(self, client, run_jobs, fake_llm) -> None:
        fake_llm.script_stream(Reply("How about a creamy mushroom risotto?"), Reply("How about a lemon pasta?"))
        frames, _ = chat(client, run_jobs, "I can't stand mushrooms, what should I cook tonight?")
        assert message_of(frames)["text"] == "How about a lemon pasta?"
