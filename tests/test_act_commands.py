"""Explicit commands end to end (issue 31): POST /chat → router → ACT fast path → the skill's rows, no LLM plan.

Under the small-model profile the fast path (services/act/fastpath.py) turns a command that carries its
content into the skill's action itself: no planning step is scripted here, so a row that appears was
chosen by the router and the fast path alone. The router runs on its text signals (the worker fixture
loads no embedding model), which is also what it falls back to when the embedding fails.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select

from services.act.models import Goal, ListItem, NamedList, ScheduledItem
from services.db import Exchange
from services.memory.models import Fact
from tests.llm_steps import Json, Reply
from tests.test_act_chat import chat, message_of, person, tomorrow_at  # noqa: F401  (person: a fixture)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("person")]  # a user in New York


@pytest.fixture
def settings(settings):  # type: ignore[no-untyped-def]
    """The small-model profile: plain commands take the ACT fast path."""
    return replace(settings, llm_profile="compact")


def fast_action(db_engine) -> dict:  # type: ignore[no-untyped-def]
    """The one action of the last stored turn, which must have been taken by the fast path."""
    with db_engine.connect() as connection:
        trail = connection.execute(select(Exchange.tool_trail).order_by(Exchange.id.desc())).scalars().first()
    actions = [entry for entry in trail if entry["type"] == "action"]
    assert len(actions) == 1 and actions[0]["fast_path"] is True and actions[0]["ok"] is True, trail
    return actions[0]


def test_a_list_created_with_its_items_stores_every_item(client, run_jobs, fake_llm, db_engine):
    frames, _ = chat(client, run_jobs, "Could you create a packing list with passport, charger and sunscreen?")
    message = message_of(frames)
    assert message["mode"] == "ACT"
    assert message["text"] == ("Added passport, charger and sunscreen to your packing list. "
                               "It now has: passport, charger and sunscreen.")
    assert fast_action(db_engine)["skill"] == "list"
    with db_engine.connect() as connection:
        rows = connection.execute(select(NamedList.name, ListItem.text).join(ListItem)
                                  .order_by(ListItem.position)).all()
    assert rows == [("packing", "passport"), ("packing", "charger"), ("packing", "sunscreen")]
    assert fake_llm.requests == []  # routed, acted and answered without the model


@pytest.mark.parametrize(("text", "name", "items"), [
    ("Shopping list: milk, eggs, bread", "shopping", ["milk", "eggs", "bread"]),
    ("I need a list for the camping weekend. tent, sleeping bags, headlamp, matches",
     "camping weekend", ["tent", "sleeping bags", "headlamp", "matches"]),
    ("make me a wishlist w/ a kindle, noise cancelling headphones", "wish", ["kindle", "noise cancelling headphones"]),
    ("need these on the hardware list: hinges, wood glue, sandpaper", "hardware", ["hinges", "wood glue", "sandpaper"]),
    # Asked politely with no verb at all (issue 31, fifth round).
    ("oat milk and bananas on the shopping list please", "shopping", ["oat milk", "bananas"]),
])
def test_a_list_given_with_its_items_and_no_verb_stores_every_item(client, run_jobs, fake_llm, db_engine, text, name,
                                                                   items):
    frames, _ = chat(client, run_jobs, text)
    message = message_of(frames)
    assert message["mode"] == "ACT"
    joined = ", ".join(items[:-1]) + " and " + items[-1]
    assert message["text"] == f"Added {joined} to your {name} list. It now has: {joined}."
    assert fast_action(db_engine)["skill"] == "list"
    with db_engine.connect() as connection:
        rows = connection.execute(select(NamedList.name, ListItem.text).join(ListItem)
                                  .order_by(ListItem.position)).all()
    assert rows == [(name, item) for item in items]
    assert fake_llm.requests == []


@pytest.mark.parametrize(("text", "fact"), [
    ("Please store this: the gate code at the allotment is 4471.", "the gate code at the allotment is 4471"),
    ("please store: the spare key is under the blue pot", "the spare key is under the blue pot"),  # verb, colon
    # Issue 31, fifth round: a storing verb of another language before the colon, and a note to self.
    ("bitte merken: the wifi at the bakery is Gast42", "the wifi at the bakery is Gast42"),
    ("Note to self: the boiler service is due in October", "the boiler service is due in October"),
    # Issue 31, sixth round: a second storing verb after the note to self, a command after "but", holding on to this.
    ("note to self but save it: the ladder is in Ken's shed", "the ladder is in Ken's shed"),
    ("long shift. but remember this: the night bus leaves at 00:40", "the night bus leaves at 00:40"),
    ("I need you to hang on to this: the vet's number is 01632 960 111", "the vet's number is 01632 960 111"),
    # Issue 31, seventh round: "the fact that", and punctuation spoken to a dictating phone.
    ("could you store the fact that the loft hatch sticks in winter?", "the loft hatch sticks in winter"),
    ("save this note colon the gutter man is Pete full stop", "the gutter man is Pete"),
    ("I am wanting you to remember my bike is a blue Trek", "my bike is a blue Trek"),  # a learner's request
])
def test_information_to_store_becomes_one_memory_item_in_the_persons_words(client, run_jobs, fake_llm, db_engine,
                                                                           text, fact):
    frames, _ = chat(client, run_jobs, text)
    message = message_of(frames)
    assert message["mode"] == "ACT"
    assert message["text"] == f"Noted, I'll remember: {fact}."
    assert fast_action(db_engine)["skill"] == "memorize"
    with db_engine.connect() as connection:
        facts = connection.execute(select(Fact.text, Fact.speaker, Fact.superseded_by)).all()
    assert facts == [(fact, "user", None)]


@pytest.mark.parametrize(("text", "goal"), [
    ("My goal is to run a 10k by May, can you keep track of it?", "run a 10k by May"),
    # The wish first, then the ask to keep it as a goal (issue 31's second round).
    ("I want to swim twice a week before summer. Please track that as a goal.", "swim twice a week before summer"),
    # A number's thousands comma stays in the goal (issue 31's sixth round).
    ("I want to walk 12,000 steps a day, can you track that?", "walk 12,000 steps a day"),
])
def test_a_goal_to_keep_track_of_is_recorded_once(client, run_jobs, fake_llm, db_engine, text, goal):
    frames, _ = chat(client, run_jobs, text)
    message = message_of(frames)
    assert message["mode"] == "ACT"
    assert message["text"].startswith(f"New goal recorded: {goal}.")
    assert fast_action(db_engine)["skill"] == "goal"
    with db_engine.connect() as connection:
        goals = connection.execute(select(Goal.text, Goal.state)).all()
    assert goals == [(goal, "active")]


def test_a_dictated_list_write_stores_every_item(client, run_jobs, fake_llm, db_engine):
    """Issue 31, seventh round: the marks a dictating phone writes as words separate the items."""
    frames, _ = chat(client, run_jobs, "add rice comma lentils and stock cubes to the shopping list full stop")
    assert message_of(frames)["mode"] == "ACT" and fast_action(db_engine)["skill"] == "list"
    with db_engine.connect() as connection:
        rows = connection.execute(select(NamedList.name, ListItem.text).join(ListItem)
                                  .order_by(ListItem.position)).all()
    assert rows == [("shopping", "rice"), ("shopping", "lentils"), ("shopping", "stock cubes")]
    assert fake_llm.requests == []


def test_a_plain_reminder_is_scheduled_at_the_time_given(client, run_jobs, fake_llm, db_engine):
    frames, _ = chat(client, run_jobs, "pls remind me tomorrow at 9 to water the tomatoes")
    assert message_of(frames)["mode"] == "ACT"
    assert fast_action(db_engine)["skill"] == "schedule"
    with db_engine.connect() as connection:
        item = connection.execute(select(ScheduledItem)).one()
    assert (item.text, item.due_at) == ("water the tomatoes", tomorrow_at(9))


@pytest.mark.parametrize("text", [
    "Store this.",
    "Create a list.",
    "Set a goal.",
    "Add the things I mentioned to my shopping list.",
    "Remind me about what we discussed.",
    "Add the rest to my list too.",  # "the rest" points back at something never said (issue 31, second round)
    "I'd like to save something to my notes.",  # a placeholder where the content would be (third round)
    "guarda esto:",  # a storing verb before a colon with nothing after it (fifth round)
    # Seventh round: a reaction before a command on a pointer, a general deed on something unnamed, a command on a
    # pointer inside chit-chat.
    "yep, sounds good, book it",
    "I need you to sort out something before Monday",
    "Long day — can you put the stuff we talked about on my to-do list? — anyway, bed.",
])
def test_a_command_with_nothing_to_act_on_is_asked_about_and_stores_nothing(client, run_jobs, fake_llm, db_engine,
                                                                           text):
    answered_and_nothing_acted_on(client, run_jobs, fake_llm, db_engine, text, "CLARIFY",
                                  "What would you like me to do exactly?", stored=(Fact,))


def answered_and_nothing_acted_on(client, run_jobs, fake_llm, db_engine, text, mode, reply, stored=()) -> None:
    """``text`` gets the scripted ``reply`` in ``mode``; no list, goal or reminder (nor any of ``stored``) is
    written and no action runs."""
    fake_llm.script(Reply(reply))
    frames, _ = chat(client, run_jobs, text)
    message = message_of(frames)
    assert (message["mode"], message["text"]) == (mode, reply)
    with db_engine.connect() as connection:
        counts = [connection.execute(select(func.count()).select_from(model)).scalar_one()
                  for model in (NamedList, ListItem, Goal, ScheduledItem, *stored)]
        trail = connection.execute(select(Exchange.tool_trail)).scalar_one()
    assert counts == [0] * len(counts)
    assert not [entry for entry in trail or [] if entry.get("type") == "action"]


def test_a_question_about_reminders_is_answered_from_the_reminders_themselves(client, run_jobs, fake_llm, db_engine):
    chat(client, run_jobs, "pls remind me tomorrow at 9 to water the tomatoes")
    frames, _ = chat(client, run_jobs, "Did I ask you to remind me of anything tomorrow?")
    message = message_of(frames)
    assert message["mode"] == "ACT" and fast_action(db_engine)["skill"] == "schedule"
    assert message["text"].startswith("Your reminders: ") and "water the tomatoes" in message["text"]
    assert fake_llm.requests == []  # read, not planned or worded by the model


def test_asking_which_reminder_was_set_reads_it_and_sets_nothing_new(client, run_jobs, fake_llm, db_engine):
    """Issue 31's third round: a question about a reminder already set was routed to CLARIFY as a reminder to set
    with nothing to remind of; it reads the reminders and stores no second one."""
    chat(client, run_jobs, "pls remind me tomorrow at 9 to water the tomatoes")
    frames, _ = chat(client, run_jobs, "What was the reminder I set for tomorrow?")
    message = message_of(frames)
    assert message["mode"] == "ACT" and fast_action(db_engine)["skill"] == "schedule"
    assert "water the tomatoes" in message["text"]
    with db_engine.connect() as connection:
        items = connection.execute(select(ScheduledItem.text, ScheduledItem.due_at)).all()
    assert items == [("water the tomatoes", tomorrow_at(9))]


@pytest.mark.parametrize("text", ["Update: I sold the Golf!", "finally finished painting the spare room"])
def test_news_is_acknowledged_and_nothing_is_acted_on(client, run_jobs, fake_llm, db_engine, text):
    """News under a label ("Update: ...") commands nothing: a short acknowledgement, no list, goal or reminder."""
    answered_and_nothing_acted_on(client, run_jobs, fake_llm, db_engine, text, "ACKNOWLEDGE",
                                  "Congratulations, that's great news!")


# Issue 31, fourth round: commands to show stored items read them back; prompts asked for at a time are scheduled;
# questions about the person's past are answered in words (RESPOND).
@pytest.mark.parametrize("text", ["show me my reminders", "Display my reminders for the next few days.",
                                  "can I see my reminders please?"])  # asked to see them (seventh round)
def test_a_command_to_show_reminders_reads_them_and_sets_nothing(client, run_jobs, fake_llm, db_engine, text):
    chat(client, run_jobs, "pls remind me tomorrow at 9 to water the tomatoes")
    frames, _ = chat(client, run_jobs, text)
    message = message_of(frames)
    assert message["mode"] == "ACT" and fast_action(db_engine)["skill"] == "schedule"
    assert message["text"].startswith("Your reminders: ") and "water the tomatoes" in message["text"]
    with db_engine.connect() as connection:
        items = connection.execute(select(ScheduledItem.text, ScheduledItem.due_at)).all()
    assert items == [("water the tomatoes", tomorrow_at(9))]
    assert fake_llm.requests == []


def test_listing_the_goals_reads_every_goal_and_records_none(client, run_jobs, fake_llm, db_engine):
    chat(client, run_jobs, "My goal is to run a 10k by May, can you keep track of it?")
    frames, _ = chat(client, run_jobs, "list my goals")
    message = message_of(frames)
    assert message["mode"] == "ACT" and fast_action(db_engine)["skill"] == "goal"
    assert message["text"] == "Your goals: run a 10k by May (active)."
    with db_engine.connect() as connection:
        assert connection.execute(select(Goal.text)).scalars().all() == ["run a 10k by May"]
    assert fake_llm.requests == []


def test_bringing_up_what_was_saved_searches_memory_for_it(client, run_jobs, fake_llm, db_engine):
    chat(client, run_jobs, "Please store this: the boiler was serviced in March by Dan.")
    fake_llm.script(Reply("You saved: the boiler was serviced in March by Dan."))
    frames, _ = chat(client, run_jobs, "Bring up what I saved about the boiler.")
    message = message_of(frames)
    assert message["mode"] == "ACT"
    action = fast_action(db_engine)
    assert action["skill"] == "recall"
    assert "the boiler was serviced in March by Dan" in [item["text"] for item in action["result"]["items"]]
    with db_engine.connect() as connection:  # read, not stored a second time
        assert connection.execute(select(func.count()).select_from(Fact)).scalar_one() == 1


def test_a_prompt_asked_for_at_a_time_is_scheduled(client, run_jobs, fake_llm, db_engine):
    """Under the small-model profile the one-call planner (services/act/small_plan.py) chooses it."""
    fake_llm.script(Json({"do": "ask", "text": "what went well this week", "due": "friday at 5pm", "repeat": "weekly"}))
    frames, _ = chat(client, run_jobs, "Every Friday at 5pm, ask me what went well this week.")
    message = message_of(frames)
    assert message["mode"] == "ACT" and "what went well this week" in message["text"]
    with db_engine.connect() as connection:
        items = connection.execute(select(ScheduledItem.kind, ScheduledItem.text, ScheduledItem.status)).all()
        recurrence = connection.execute(select(ScheduledItem.recurrence)).scalar_one()
    assert items == [("prompt", "what went well this week", "active")] and recurrence.startswith("FREQ=WEEKLY")


def test_a_question_about_what_was_told_is_answered_in_words_and_acts_on_nothing(client, run_jobs, fake_llm,
                                                                                  db_engine):
    """The settled definition: "what did I tell you about my landlord?" wants an answer, not a skill run."""
    answered_and_nothing_acted_on(client, run_jobs, fake_llm, db_engine, "What did I tell you about my landlord?",
                                  "RESPOND", "You told me your landlord is slow to fix things.")

