"""The small-model profile's pure parts: scaffold guard, ACT fast path, chat priority,
LLM health evidence, the start-up check of the local server, and where `./data` lives."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import fakeredis
import pytest

import consumer
from services.act.fastpath import plain_action
from services.act.wording import plain_reply
from services.embedded.lifecycle import free_port
from services.errors import LLMMalformedOutput
from services.llm.guard import ScaffoldGuard, clean_reply
from services.llm.health import llm_problem, record_exit, record_outcome
from services.llm.local import ServerProcess, check_local_llm
from services.llm.output import StopStream
from services.llm.priority import ChatPriority
from services.llm.profile import CompactBudgets, compact_messages, load_profile
from services.router.signals import RoutingContext, collect_signals
from services.settings import Settings, SettingsError
from tests.fake_llm import FakeLLM
from tests.servers import local_llm_available

NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)


# --- the scaffold guard -------------------------------------------------------------------------

def test_clean_reply_drops_a_leading_label_and_everything_from_a_copied_heading() -> None:
    assert clean_reply("Engram: Hello Dana!") == "Hello Dana!"
    assert clean_reply("Nice to meet you.\nUser: what is my name?\nEngram: Dana") == "Nice to meet you."
    assert clean_reply("Sure.\nChat history: 2023-07-24T22:59:18 User: hi") == "Sure."
    assert clean_reply("2023-07-24T22:59:18 User: hello") == ""
    assert clean_reply("Pixel is a lovely name: short and bright.") == "Pixel is a lovely name: short and bright."


def streamed(chunks: list[str]) -> tuple[list[str], ScaffoldGuard, bool]:
    sent: list[str] = []
    guard = ScaffoldGuard(sent.append)
    stopped = False
    for chunk in chunks:
        try:
            guard(chunk)
        except StopStream:
            stopped = True
            break
    return sent, guard, stopped


def test_the_guard_stops_the_stream_at_a_transcript_label_and_never_sends_it() -> None:
    sent, guard, stopped = streamed(["Hello", " Dana!", "\n", "Us", "er:", " what", " next"])
    assert stopped
    assert "".join(sent).strip() == "Hello Dana!"
    assert guard.finish("Hello Dana!\nUser: what") == "Hello Dana!"


def test_the_guard_passes_ordinary_text_at_once() -> None:
    sent, guard, stopped = streamed(["Hi", "!", " How", " are", " you?"])
    assert not stopped
    assert sent[0].startswith("Hi!")  # released as soon as it cannot be a heading
    assert guard.finish("Hi! How are you?") == "Hi! How are you?"
    assert "".join(sent) == "Hi! How are you?"


def test_a_reply_made_only_of_scaffolding_is_malformed_so_it_is_retried() -> None:
    sent, guard, stopped = streamed(["The conversation so far:", "\n", "User: hi"])
    assert stopped and sent == []
    with pytest.raises(LLMMalformedOutput):
        guard.finish("The conversation so far:\nUser: hi")


# --- compact messages ---------------------------------------------------------------------------

def test_compact_messages_put_the_stable_prompt_first_and_history_as_chat_turns() -> None:
    memory = [{"user": "My dog is Pixel", "reply": "Lovely name!"}, {"user": "thanks", "reply": "You're welcome."}]
    messages = compact_messages("SYSTEM", memory, "- The user lives in Lisbon.", "What is my dog's name?",
                                CompactBudgets())
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "system", "user"]
    assert messages[0]["content"] == "SYSTEM" and messages[1]["content"] == "My dog is Pixel"
    assert "Lisbon" in messages[-2]["content"] and messages[-1]["content"] == "What is my dog's name?"
    assert not any("User:" in m["content"] for m in messages)


def test_what_is_known_about_the_person_sits_in_the_system_prompt_and_this_messages_recall_before_it() -> None:
    """The block about the person is part of the stable prefix (the prompt cache reuses it with the history
    after it); only the message's own note, bounded by ``recalled_tokens``, comes between history and message."""
    memory = [{"user": "thanks", "reply": "You're welcome."}]
    budgets = CompactBudgets(memory_tokens=50, recalled_tokens=10)
    messages = compact_messages("SYSTEM", memory, "- you once visited Oslo and Bergen and Tromsø and Ålesund.",
                                "Where have I been?", budgets, about_text="- your dog is called Pixel.")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "system", "user"]
    assert messages[0]["content"].startswith("SYSTEM\n\nWhat you know about the person")
    assert "Pixel" in messages[0]["content"] and "Oslo" not in messages[0]["content"]
    note = messages[-2]["content"]
    assert "Oslo" in note and "Ålesund" not in note, "the note is cut to recalled_tokens (~4 characters each)"
    assert compact_messages("SYSTEM", memory, "", "hi", budgets)[0]["content"] == "SYSTEM"


def test_compact_history_keeps_the_newest_turns_within_its_budget() -> None:
    memory = [{"user": f"message {n} " + "x" * 300, "reply": "ok"} for n in range(10)]
    budgets = CompactBudgets(history_exchanges=6, history_chars=1000)
    messages = compact_messages("S", memory, "", "now", budgets)
    users = [m["content"] for m in messages if m["role"] == "user"][:-1]
    assert len(users) == 3 and users[-1].startswith("message 9")


# --- the ACT fast path --------------------------------------------------------------------------

def fast(text: str):  # type: ignore[no-untyped-def]
    return plain_action(text, collect_signals(RoutingContext(text=text)), NOW, UTC)


def test_plain_list_and_reminder_requests_become_one_action() -> None:
    assert fast("Add milk and eggs to my shopping list").arguments == {
        "operation": "add", "name": "shopping", "items": ["milk", "eggs"]}
    assert fast("What's on my shopping list?").arguments == {"operation": "view", "name": "shopping"}
    reminder = fast("Remind me tomorrow at 9 to call the dentist")
    assert reminder.skill == "schedule"
    assert reminder.arguments["text"] == "call the dentist" and reminder.arguments["due"] == "tomorrow at 9"
    assert fast("Remind me to call mum on friday at 6pm").arguments["due"] == "on friday at 6pm"
    assert fast("Remind me on the 14th at 10am to book the car service").arguments["due"] == "on the 14th at 10am"


def test_a_reminder_for_the_day_after_tomorrow_or_a_date_is_set_for_that_day() -> None:
    # The planner's guess at these was a day off, and the critic asked to confirm the wrong time; before the time
    # words after the task were read, "call mum the day after" was reminded of tomorrow.
    def task_and_due(text: str) -> tuple[str, str]:
        arguments = fast(text).arguments
        return arguments["text"], arguments["due"]
    assert task_and_due("remind me the day after tomorrow at 9 to call the notary about papa's flat") == (
        "call the notary about papa's flat", "the day after tomorrow at 9")
    assert task_and_due("remind me to call mum the day after tomorrow at 9") == (
        "call mum", "the day after tomorrow at 9")
    assert task_and_due("remind me day after tomorrow at 6pm to water the plants") == (
        "water the plants", "day after tomorrow at 6pm")
    assert task_and_due("remind me the 14th at 9 to pay the rent") == ("pay the rent", "the 14th at 9")
    assert task_and_due("remind me to pay the 2 bills tomorrow at 9") == ("pay the 2 bills", "tomorrow at 9")


def test_a_reminder_that_repeats_keeps_its_first_time_and_its_rule() -> None:
    def repeating(text: str) -> tuple[str, str, str]:
        arguments = fast(text).arguments
        return arguments["text"], arguments["due"], arguments["recurrence"]
    assert repeating("every morning at 7 remind me to take my vitamins") == ("take my vitamins", "at 7", "daily")
    assert repeating("Remind me every day at 8 to take my pills") == ("take my pills", "at 8", "daily")
    assert repeating("Please set up a reminder every Sunday at 6pm to plan the week") == (
        "plan the week", "on sunday at 6pm", "every sunday")
    assert repeating("remind me every morning to water the plants") == ("water the plants", "in the morning", "daily")
    assert repeating("remind me every night to lock the door") == ("lock the door", "at night", "daily")
    # NOW is a Monday: the first of "each weekday" is today's; said at the weekend it is Monday's.
    assert repeating("Remind me each weekday at 11:30 to check the rota") == ("check the rota", "at 11:30", "weekdays")
    saturday = plain_action("Remind me each weekday at 11:30 to check the rota",
                            collect_signals(RoutingContext(text="Remind me each weekday at 11:30 to check the rota")),
                            datetime(2026, 11, 28, 10, 0, tzinfo=UTC), UTC)
    assert saturday.arguments["due"] == "on monday at 11:30"
    assert fast("Remind me every 2 hours to drink water") is None  # left to the planner


def test_a_list_created_with_its_items_is_one_add_that_creates_it() -> None:
    assert fast("Create a list called garden jobs with weeding, pruning the roses and mowing.").arguments == {
        "operation": "add", "name": "garden jobs", "items": ["weeding", "pruning the roses", "mowing"]}
    assert fast("pls create a list 'bills' w/ electricity, water, internet").arguments["name"] == "bills"
    assert fast("could you start a packing list for Paris with adapter and comfy shoes").arguments == {
        "operation": "add", "name": "packing", "items": ["adapter", "comfy shoes"]}


def test_a_list_request_after_news_with_a_tail_or_a_formal_opening_is_still_one_add() -> None:
    """Each of these reached the small model's planner, which added nothing or part of the items (a later "add
    walnut and pistachio" was lost, and the list the person asked about held three of six items)."""
    def add(text: str) -> tuple[str, list[str]]:
        arguments = fast(text).arguments
        return arguments["name"], arguments["items"]
    assert add("off to riga in june with the lads!! create a packing list with passport, towel and adapter") == (
        "packing", ["passport", "towel", "adapter"])
    assert add("Would you be so kind as to create a reading list with the following: Middlemarch, Persuasion "
               "and some Dickens.") == ("reading", ["Middlemarch", "Persuasion", "Dickens"])
    assert add("also add hazelnuts and dates to the bakery list, for the christmas stollen") == (
        "bakery", ["hazelnuts", "dates"])
    assert add("add spark plugs to the garage list too") == ("garage", ["spark plugs"])
    assert add("add rice and lentils to the food list, my flatmate says I eat like a student") == (
        "food", ["rice", "lentils"])
    # A second request, or one before the list, is the model's to plan: neither is dropped.
    assert fast("add milk to my shopping list, and remind me at 5 to call mum") is None
    assert fast("remind me at 5 to call mum. add milk to my shopping list") is None


def test_a_list_request_in_chat_shorthand_after_a_colon_or_with_a_clause_after_its_items_is_one_add() -> None:
    """"can u create …", a lead-in ending in a colon, and a clause after the items ("…, need to sort my own kit") each
    went to the small model's planner, which wrote the person a list in the reply or said it did not understand:
    the list never held the items asked for."""
    def add(text: str) -> tuple[str, list[str]]:
        arguments = fast(text).arguments
        return arguments["name"], arguments["items"]
    assert add("can u make a camping list with tent pegs, a head torch and matches, going sat") == (
        "camping", ["tent pegs", "head torch", "matches"])
    assert add("right, boring admin bit: add stamps and envelopes to my post office list") == (
        "post office", ["stamps", "envelopes"])
    assert add("could u start a baby list with nappies, wipes and a cot sheet, cos my sister is due in may") == (
        "baby", ["nappies", "wipes", "cot sheet"])
    assert add("create a gym list with a padlock and a towel") == ("gym", ["padlock", "towel"])  # no clause: both kept
    # A list read by name as typed, or as a learner asks it.
    assert fast("wots on my camping list").arguments == {"operation": "view", "name": "camping"}
    assert fast("What I have on my baby list?").arguments == {"operation": "view", "name": "baby"}
    assert fast("What is on camping list?").arguments == {"operation": "view", "name": "camping"}


def test_a_new_lists_items_end_at_the_sentence_or_the_clause_after_them() -> None:
    """"…, fins and the cooler. we goin richardsons this wknd" was stored as the item "cooler. we goin richardsons
    this wknd", and "…, a unicorn cake topper, because ada's party is coming up and unicorns are all she talks about"
    as three items more than asked for; a formal opening ("I would be grateful if you would create …") reached the
    planner, and a list asked for by what it is for ("the list for the beach") was answered from a partial note."""
    def add(text: str) -> tuple[str, list[str]]:
        arguments = fast(text).arguments
        return arguments["name"], arguments["items"]
    assert add("make a hike list with water, snacks and the map. we leave at dawn") == (
        "hike", ["water", "snacks", "map"])
    assert add("Create a bake sale list with flour, sugar, a cake tin, because the school fair is next week and "
               "the kids are excited") == ("bake sale", ["flour", "sugar", "cake tin"])
    assert add("I would be grateful if you would create a sewing list with thread, pins and tailor's chalk.") == (
        "sewing", ["thread", "pins", "tailor's chalk"])
    assert fast("wat we got on the list for the campsite so far").arguments == {"operation": "view", "name": "campsite"}
    # Asked for the reminders in other words than "remind" (the 1.5B, given them as notes, named the wrong one).
    assert fast("What was it you were to prompt me about on Friday?").arguments == {"operation": "list"}
    assert fast("what did you have to nudge me about tomorrow?").arguments == {"operation": "list"}
    assert fast("What have I put on my list for the allotment thus far?").arguments == {
        "operation": "view", "name": "allotment"}


def test_information_to_store_is_kept_in_the_persons_own_words() -> None:
    stored = fast("Please store this: my car's registration is KX19 ABC.")
    assert (stored.skill, stored.arguments) == ("memorize", {"text": "my car's registration is KX19 ABC"})
    assert fast("Keep a note that my dentist is Dr. Alvarez.").arguments == {"text": "my dentist is Dr. Alvarez"}
    later = fast("Thanks for the tip earlier! Oh, and note down that Priya's wedding is on 12 July.")
    assert later.arguments == {"text": "Priya's wedding is on 12 July"}


def test_a_goal_to_set_or_track_is_created_without_its_tracking_words() -> None:
    goal = fast("My new year's goal is to cook at home more, track it please.")
    assert (goal.skill, goal.arguments) == ("goal", {"operation": "create", "text": "cook at home more"})
    assert fast("Good morning :) New goal for this month: no takeaways. Can you track it?").arguments["text"] == \
        "no takeaways"
    assert fast("Set me a goal to cycle to work three days a week.").arguments["text"] == \
        "cycle to work three days a week"


def test_commands_without_their_content_are_not_run() -> None:
    for text in ("Store this.", "Please store this:", "Set a goal.", "Make a new list.", "Please remember.",
                 "Update my reading goal: I'm on book 7 now.", "Remember that for me.", "Remember to buy milk"):
        assert fast(text) is None, text


def test_a_question_routed_to_act_reads_memory_with_its_own_words() -> None:
    assert fast("What is my dog's name?").arguments == {"query": "What is my dog's name?"}


def test_requests_that_need_judgement_are_left_to_the_model() -> None:
    assert fast("Remind me to call the dentist") is None  # no time: CLARIFY must ask
    assert fast("Schedule it.") is None
    assert fast("I love shopping lists, tell me why people use them") is None


def test_the_fast_reply_is_written_from_the_result() -> None:
    added = {"type": "action", "skill": "list", "ok": True, "arguments": {"operation": "add", "name": "shopping"},
             "result": {"list": "shopping", "added": ["milk", "eggs"], "already_there": [],
                        "items": [{"text": "milk", "checked": False}, {"text": "eggs", "checked": False}]}}
    assert plain_reply(added) == "Added milk and eggs to your shopping list. It now has: milk and eggs."
    missing = {"type": "action", "skill": "list", "ok": False, "arguments": {"operation": "view", "name": "packing"},
               "error": {"code": "not_found", "lists": ["shopping"]}}
    assert "don't have a packing list" in plain_reply(missing)
    remembered = {"type": "action", "skill": "memorize", "ok": True, "arguments": {"text": "my code is 5512"},
                  "result": {"fact_id": 3, "action": "inserted", "text": "my code is 5512"}}
    assert plain_reply(remembered) == "Noted, I'll remember: my code is 5512."
    goal = {"type": "action", "skill": "goal", "ok": True, "arguments": {"operation": "create", "text": "read more"},
            "result": {"created": {"id": 1, "text": "read more", "state": "active", "progress": []}}}
    assert plain_reply(goal).startswith("New goal recorded: read more.")


# --- chat priority and LLM health ---------------------------------------------------------------

def marked(priority: ChatPriority, request_id: str) -> None:
    """A chat turn's in-flight mark, as the digest sets it."""
    pipeline = priority.redis.pipeline()
    priority.mark(pipeline, request_id)
    pipeline.execute()


def test_background_llm_calls_wait_while_a_chat_turn_generates() -> None:
    connection = fakeredis.FakeRedis()
    priority = ChatPriority(connection)
    marked(priority, "req-1")
    waiter = threading.Thread(target=priority.wait_for_chat, args=("memory_chunker",))
    waiter.start()
    time.sleep(0.3)
    assert waiter.is_alive()  # still waiting: the chat turn is generating
    priority.clear("req-1")
    waiter.join(timeout=2)
    assert not waiter.is_alive()


def test_a_stale_chat_mark_does_not_block_housekeeping() -> None:
    connection = fakeredis.FakeRedis()
    clock = [1000.0]
    priority = ChatPriority(connection, clock=lambda: clock[0])
    marked(priority, "crashed-worker")
    clock[0] += 500  # the mark expired: its worker died without clearing it
    assert priority.chats_in_flight() == 0


def test_health_reports_a_crashed_llm_until_a_turn_is_answered_again() -> None:
    connection = fakeredis.FakeRedis()
    assert llm_problem(connection, ("llm",)) is None
    record_exit(connection, "llm", -11, now=100.0)
    problem = llm_problem(connection, ("llm",), now=110.0)
    assert problem is not None and "SIGSEGV" in problem
    record_outcome(connection, True, now=120.0)
    assert llm_problem(connection, ("llm",), now=130.0) is None
    record_outcome(connection, False, "LLMUnavailable: HTTP 500", now=140.0)
    assert "HTTP 500" in (llm_problem(connection, ("llm",), now=150.0) or "")
    assert llm_problem(connection, ("llm",), now=1000.0) is None  # old news after a while


def test_the_start_check_names_a_server_that_crashes() -> None:
    crashing = subprocess.Popen([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    crashing.wait(timeout=30)
    problem = check_local_llm(ServerProcess("llm", "http://127.0.0.1:9/v1", crashing), timeout=10)
    assert problem is not None and "SIGSEGV" in problem and "make install-local" in problem


def _supervised_llm(process: subprocess.Popen[bytes] | None, port: int, connection: fakeredis.FakeRedis):  # type: ignore[no-untyped-def]
    child = SimpleNamespace(role=SimpleNamespace(argv=["llama", "--port", str(port)]), process=process)
    return SimpleNamespace(children={"llm": child}, redis=connection)


def test_health_says_the_llm_is_starting_until_its_test_completion_answered(fake_llm: FakeLLM) -> None:
    connection = fakeredis.FakeRedis()
    consumer._record_start_check(connection, "pending")  # what `engram run` does before starting the roles
    starting = llm_problem(connection, ("llm",))
    assert starting is not None and "start-up test completion" in starting
    assert consumer._check_llm_servers(_supervised_llm(None, fake_llm.port, connection))  # type: ignore[arg-type]
    assert llm_problem(connection, ("llm",)) is None


def test_health_names_a_failed_start_check() -> None:
    connection = fakeredis.FakeRedis()
    consumer._record_start_check(connection, "pending")
    crashing = subprocess.Popen([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    crashing.wait(timeout=30)
    assert not consumer._check_llm_servers(_supervised_llm(crashing, free_port(), connection))  # type: ignore[arg-type]
    problem = llm_problem(connection, ("llm",))
    assert problem is not None and "failed its start-up test completion" in problem and "SIGSEGV" in problem


# --- settings -----------------------------------------------------------------------------------

def test_data_lives_under_the_working_directory_unless_overridden(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert Settings.from_env({}).data_dir == tmp_path / "data"
    assert Settings.from_env({"ENGRAM_DATA_DIR": "/srv/engram"}).data_dir == Path("/srv/engram")


def test_the_llm_profile_setting_is_checked() -> None:
    assert Settings.from_env({"ENGRAM_LLM_PROFILE": "compact"}).compact_prompts
    assert not Settings.from_env({}).compact_prompts
    with pytest.raises(SettingsError, match="ENGRAM_LLM_PROFILE"):
        Settings.from_env({"ENGRAM_LLM_PROFILE": "tiny"})


def test_a_negative_compact_budget_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "profiles.toml").write_text("[compact]\nrecalled_tokens = -1\n")
    settings = Settings.from_env({"ENGRAM_LLM_PROFILE": "compact", "ENGRAM_CONFIGS_DIR": str(tmp_path)})
    with pytest.raises(SettingsError, match="recalled_tokens = -1 should be >= 0"):
        load_profile(settings)


@pytest.mark.skipif(not local_llm_available(), reason="needs the local extra and the local model")
def test_housekeeping_goes_to_the_one_chat_server(tmp_path: Path) -> None:
    from consumer import _llm_roles

    settings = Settings.from_env({"ENGRAM_DATA_DIR": str(tmp_path)})
    roles, env = _llm_roles(settings, ["web", "digest", "chunker"])
    assert [role.name for role in roles] == ["llm"]
    port = roles[0].argv[roles[0].argv.index("--port") + 1]
    assert env["OPENAI_BASE_URL"].endswith(f":{port}/v1")


def test_housekeeping_roles_run_at_a_lower_cpu_priority(tmp_path: Path) -> None:
    from services.supervisor import Role, Supervisor

    out = tmp_path / "nice"
    code = f"import os; open({str(out)!r}, 'w').write(str(os.nice(0)))"
    supervisor = Supervisor([Role("chunker", [sys.executable, "-c", code], {}, heartbeat=False, nice=10)],
                            redis_client=None, hung_after_s=60)
    supervisor.start()
    supervisor.children["chunker"].process.wait(timeout=30)
    assert int(out.read_text()) >= min(19, 10 + os.nice(0))  # 19 is the ceiling: a suite run under nice reaches it
