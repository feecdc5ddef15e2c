"""Bad news told is met with sympathy, not cheer (the compact profile's reaction prompt).

The 1.5B's reaction opened "That's great to hear!" on "My back is hurting from sitting so much" and on "Paper is
rejected from first journal"; a reaction to bad news gets prompts/compact/sympathise.md instead.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from services.router.mood_words import sad_news
from tests.llm_steps import Reply
from tests.test_act_chat import chat, message_of, person  # noqa: F401 - the default user fixture

SAD = [
    "Our washing machine packed in this morning, flooded the kitchen floor too.",
    "The car broke down on the ring road, waiting on the AA now.",
    "Sprained my wrist at netball last night, can't even hold a mug properly.",
    "Didn't get the job at the library. They went with someone internal.",
    "My bike was stolen from outside the station.",
    "Down with the flu since Sunday, everything aches.",
    "Bad news, the vet says Bonnie has to have her leg operated on.",
    "Unfortunately the wedding is off, they've split up.",
    "My knee is still swollen after the fall, the physio wants another scan.",
    "Our flight to Malaga was cancelled, stuck in Gatwick for the night.",
    "My mum is in hospital with a chest infection.",
    "We had to rehome the puppy, the landlord found out.",
]
NOT_SAD = [
    "I passed my driving test this morning!",
    "My daughter got into medical school, so proud of her.",
    "We finally fixed the leak after three weeks, dry ceiling at last!",
    "Good news, the scan came back clear.",
    "I'm a nurse at the Royal, twelve-hour shifts mostly.",
    "The tea got cold while I was on the phone to my sister.",
    "Crashed on the sofa after work and slept till nine, bliss.",
    "My granddaughter turned six yesterday, we had a party in the garden.",
    "I don't eat pork, just so you know.",
    "Moving to Leeds in March for the new job, can't wait.",
]


@pytest.mark.parametrize("text", SAD)
def test_bad_news_is_read_as_sad(text: str) -> None:
    assert sad_news(text)


@pytest.mark.parametrize("text", NOT_SAD)
def test_good_news_and_plain_facts_are_not(text: str) -> None:
    assert not sad_news(text)


def test_news_the_person_calls_bad_is_sad_even_beside_good_news() -> None:
    assert sad_news("Bad news and good news: the paper was rejected, but the defence just moves to September.")


@pytest.fixture
def settings(settings):  # type: ignore[no-untyped-def]
    return replace(settings, llm_profile="compact")


@pytest.mark.integration
@pytest.mark.usefixtures("person")
@pytest.mark.parametrize(("told", "sympathy"), [
    ("Our boiler packed in last night and the engineer can't come till Thursday.", True),
    ("Our boiler was fixed this morning, warm house at last.", False),
])
def test_the_reaction_to_bad_news_is_asked_for_as_sympathy(client, run_jobs, fake_llm, told: str,
                                                          sympathy: bool) -> None:
    fake_llm.script_stream(Reply("Oh no, I'm sorry to hear that." if sympathy else "Lovely, enjoy the warmth."))
    frames, _ = chat(client, run_jobs, told)
    assert message_of(frames)["text"]  # the reply arrives
    asked = fake_llm.requests[-1]["messages"]
    assert asked[-1]["content"] == told
    instruction = asked[-2]["content"]
    assert asked[-2]["role"] == "system" and "asks for nothing" in instruction
    assert ("sorry to hear" in instruction) is sympathy
