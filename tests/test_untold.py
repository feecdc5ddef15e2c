"""Asked about someone or something of theirs they never spoke of, the person is told so: the 1.5B answered "What's my
dog called?" with "Your dog is called Biscuit." (the cat's name) and "When is my birthday?" with a date from another
line (the answers bench's untold questions: 2 of 8 right)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy.orm import Session

from services.memory.facts import remember_fact
from services.memory.untold import asked_of_own, never_told
from tests.llm_steps import Reply
from tests.memory_builders import create_exchange, create_user
from tests.test_act_chat import chat, message_of, person  # noqa: F401 - the default user fixture


@pytest.mark.parametrize(("question", "thing"), [
    ("What's my dog called?", "dog"),
    ("whats my cats name", "cat"),
    ("When is my birthday?", "birthday"),
    ("When's my birthday again?", "birthday"),
    ("What's my late wife's name?", "wife"),
    ("What is the name of my husband?", "husband"),
    ("what are my daughters called?", "daughter"),
    ("How old is my son?", "son"),
    ("Where does my sister live now?", "sister"),
    ("When is my mom's birthday?", "mum"),
    ("Who is my grandad?", "grandpa"),
    ("When is Marci's birthday?", "Marci's birthday"),  # someone named (people24's zsofia)
    ("whens jess's bday again", "jess's birthday"),
])
def test_a_question_of_recall_about_ones_own_is_read(question: str, thing: str) -> None:
    assert asked_of_own(question) == thing


@pytest.mark.parametrize("question", [
    "What should I get my wife for her birthday?",  # advice, not recall
    "What do you think my dog would like for Christmas?",
    "How do I help my son with his maths homework?",
    "What's the name of my food truck?",  # not one of the things a person has that the check knows
    "My dog is called Rex.",  # not a question
    "When is the museum open?",
    "When is his birthday?",
])
def test_advice_and_other_questions_are_not(question: str) -> None:
    assert asked_of_own(question) is None


@pytest.mark.integration
def test_only_what_the_person_never_named_is_untold(db_engine, hash_embedder) -> None:
    with Session(db_engine) as session:
        create_user(session, user_id="untold-ros")
        create_user(session, user_id="untold-other")
        create_exchange(session, user_id="untold-ros", user_text="My cat Biscuit hates the new flat.",
                        reply="Your dog is called Max.")  # a made-up reply is no telling
        create_exchange(session, user_id="untold-other", user_text="My husband Tom walks our dog Rex at six.")
        remember_fact(session, hash_embedder, "untold-ros", "The user lives with a wire-haired terrier, Pickle")
        session.flush()
        assert never_told(session, "untold-ros", "What's my husband called?") == "their husband"  # another's
        assert never_told(session, "untold-ros", "When is my birthday?") == "their birthday"
        assert never_told(session, "untold-ros", "What's my cat called?") == ""
        assert never_told(session, "untold-ros", "What's my dog called?") == ""  # the terrier is a dog
        assert never_told(session, "untold-other", "What's my dog's name?") == ""
        assert never_told(session, "untold-other", "What's my cat's name?") == "their cat"
        assert never_told(session, "untold-other", "Any idea what I could cook tonight?") == ""
        create_exchange(session, user_id="untold-ros", user_text="We have a little son, Marci, he is four.")
        create_exchange(session, user_id="untold-ros", user_text="Aroha turns six on the 3rd of January!")
        assert never_told(session, "untold-ros", "When is Marci's birthday?") == "Marci's birthday"
        assert never_told(session, "untold-ros", "When is Aroha's birthday?") == ""
        assert never_told(session, "untold-other", "When is Aroha's birthday?") == "Aroha's birthday"
        session.rollback()


@pytest.fixture
def settings(settings):  # type: ignore[no-untyped-def]
    return replace(settings, llm_profile="compact")


@pytest.mark.integration
@pytest.mark.usefixtures("person")
def test_the_small_model_is_told_what_was_never_told_before_the_question(client, run_jobs, fake_llm) -> None:
    fake_llm.script_stream(Reply("Aww, poor Biscuit."))
    _, thread = chat(client, run_jobs, "My cat Biscuit hates the new flat, she hides under the bed all day.")
    for question, untold in (("What's my dog called?", True), ("What's my cat called?", False)):
        fake_llm.script_stream(Reply("You haven't told me." if untold else "Biscuit."))
        frames, _ = chat(client, run_jobs, question, thread)
        assert message_of(frames)["text"]  # the reply arrives
        asked = fake_llm.requests[-1]["messages"]
        assert asked[-1]["content"] == question
        note = asked[-2]["content"] if asked[-2]["role"] == "system" else ""
        assert ("Nothing you know mentions their dog" in note) is untold
        assert "Nothing you know mentions" not in asked[0]["content"]  # the stable prefix is untouched
