"""Accuracy of the mode router on the labelled routing set (tests/data/routing_set.jsonl).

Every 5th line is held out: weights and exemplars were tuned while looking only at the errors
of the other lines, and the held-out accuracy is reported and asserted separately.

Labelling notes (the mode definitions are those of issue 3):
- Editing or removing what is stored is ACT: forgetting a memory ("forget that I live in Paris"),
  cancelling or moving a reminder, ticking, unticking or removing list items, deleting or creating a
  list, completing or dropping a goal, and reading reminders or goals back. A consequential edit
  ("delete everything you know about my job") is still ACT: the ACT critic asks for confirmation.
- The same edit with nothing to point at is CLARIFY ("Delete it.", "Cancel that." with no earlier
  turn, "Delete the reminder.", "Change my goal."); with an antecedent in working memory it is ACT.
- A question about what the assistant can do in general ("Can you forget things?", "Do you ever
  delete old conversations?") is RESPOND; ACT (introspect) is for what it knows about *this* user.
- How-to questions that merely use the words are RESPOND ("How do I delete a file in Linux?").
- The 66 lines after line 428 (the forget / edit / goal-management batch) were written and labelled
  before any tuning; their held-out lines are messages written for this set, not the ones named in
  the bug report the batch answers.
- The lines after line 494 (issue 31: lists created with their items, information to store, goals to
  set or track, underspecified commands, polite writing requests, thanks in other languages) were all
  looked at while tuning: the held-out fifth is taken from the first 494 lines only.
- The lines after line 1024 are issue 31's second round: messages of the miss classes found on the once-frozen
  sets, written by the tuner in words of their own (typos, reading what is stored, lists with their items and
  no verb, descriptions pointing back, general questions in a skill's words), all looked at while tuning.
- The lines after line 1096 are issue 31's third round, written by the tuner for the settled definitions (news,
  updates, plans, moods and facts told with nothing asked are ACKNOWLEDGE; distress or a plea for support is
  RESPOND): commands in chit-chat, politeness in other languages, typos, non-messages, all looked at while
  tuning. In the same
  round seven statements of the older lines were relabelled RESPOND → ACKNOWLEDGE to follow the settled
  definition (lines 38, 80, 1084 here; lines 219, 220, 222, 227 of routing_tuning2.jsonl); statements of
  nervousness or worry stay RESPOND.
- In issue 31's fourth round (2026-11-29) the settled definitions were applied to the questions about the person's
  past: 57 rows labelled ACT that ask what the person told, or a fact of theirs, wanting an answer in words, were
  relabelled RESPOND (and 15, 10 and 11 rows of routing_tuning1/2/3.jsonl); each is listed in its set's .md
  (tests/data/routing_set.md, routing_tuning1.md, ...). Commands to show stored items stay ACT.
- tests/data/routing_tuning1.jsonl and routing_tuning2.jsonl were frozen sets (routing_frozen.jsonl and
  routing_frozen2.jsonl) until issue 31's second round tuned on their misses, routing_tuning3.jsonl
  (routing_frozen3.jsonl) until its third round, routing_tuning4.jsonl (routing_frozen4.jsonl) until its fourth,
  routing_tuning5.jsonl (routing_frozen5.jsonl) until its fifth, routing_tuning6.jsonl (routing_frozen6.jsonl) until
  its sixth, routing_tuning7.jsonl (routing_frozen7.jsonl) until its seventh, routing_tuning8.jsonl
  (routing_frozen8.jsonl) until its eighth, routing_tuning9.jsonl (routing_frozen9.jsonl, 0.928 blind) and
  routing_tuning10.jsonl (routing_frozen10.jsonl, 0.944 blind) after it, routing_tuning11.jsonl
  (routing_frozen11.jsonl, 0.917 blind) after the ninth, routing_tuning12.jsonl (routing_frozen12.jsonl, 0.947 blind)
  after the tenth, routing_tuning13.jsonl (routing_frozen13.jsonl, 0.917 blind) after the eleventh,
  routing_tuning14.jsonl (routing_frozen14.jsonl, 0.947 blind) after the twelfth,
  routing_tuning15.jsonl (routing_frozen15.jsonl, 0.947 blind) after the thirteenth,
  routing_tuning16.jsonl (routing_frozen16.jsonl, 0.944 blind) after the fourteenth,
  routing_tuning17.jsonl (routing_frozen17.jsonl, 0.939 blind) after the fifteenth,
  routing_tuning18.jsonl (routing_frozen18.jsonl, 0.947 blind) after the sixteenth;
  a fixed random third of each
  (bench.routing.held_out_third) was never looked at. Quality on data never tuned on is measured by the
  frozen sets, tests/data/routing_frozen*.jsonl, written blind (bench.routing).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench.routing import FROZEN_SETS, TUNING_SETS, held_out, held_out_third, load_rows
from bench.routing import evaluate as evaluate_with_skills
from services.embeddings import for_requests, load_embedder
from services.router.exemplars import load_exemplars
from services.router.mode_router import ModeRouter, context_from_record
from services.router.signals import MODES, text_view

ROOT = Path(__file__).resolve().parents[1]
ROUTING_SET = ROOT / "tests" / "data" / "routing_set.jsonl"
CONTEXT_KEYS = {
    "working_memory", "previous_mode", "pending_confirmation", "context_warmth", "turns_since_previous_mode",
}

# Floors set below what the shipped weights reach (0.99 with the embedder and on signals alone) so
# that the test catches real regressions, not one more borderline message. Signals alone is what
# routing falls back to when the embedding fails.
FLOOR_OVERALL = 0.95
FLOOR_PER_MODE = 0.90
FLOOR_HELD_OUT = 0.90
FLOOR_SIGNALS_ONLY = 0.93
# The two once-frozen sets, tuned on since issue 31's second round (bench.routing): floors ~0.02 under what the
# shipped weights reach with the default embedder (first: 0.989 overall, ACT 0.987, CLARIFY 0.974; second: 0.980,
# ACT 0.984, CLARIFY 0.933, skill 121/121 of ACT rows routed to ACT), and never a real message ignored.
# routing_tuning1 was written by the tuner (as routing_frozen.jsonl), routing_tuning2-31 blind (routing_frozenN).
(TUNING_1, TUNING_2, TUNING_3, TUNING_4, TUNING_5, TUNING_6, TUNING_7, TUNING_8, TUNING_9, TUNING_10, TUNING_11,
 TUNING_12, TUNING_13, TUNING_14, TUNING_15, TUNING_16, TUNING_17, TUNING_18, TUNING_19, TUNING_20, TUNING_21,
 TUNING_22, TUNING_23, TUNING_24, TUNING_25, TUNING_26, TUNING_27, TUNING_28, TUNING_29, TUNING_30,
 TUNING_31) = (
    ROOT / "tests" / "data" / f"routing_tuning{number}.jsonl" for number in range(1, 32))
FLOOR_TUNING_1_OVERALL = 0.97
FLOOR_TUNING_1_ACT = 0.96
FLOOR_TUNING_1_CLARIFY = 0.95
FLOOR_TUNING_2_OVERALL = 0.96
FLOOR_TUNING_2_ACT = 0.96
FLOOR_TUNING_2_CLARIFY = 0.91
FLOOR_TUNING_2_SKILL = 0.98
# The third (routing_frozen3.jsonl, 0.888 blind), tuned on from issue 31's third round: 0.979 overall, ACT 0.968,
# CLARIFY 0.923, ACKNOWLEDGE 1.000, skill 90/91 with the default embedder; floors a little under.
FLOOR_TUNING_3 = {"overall": 0.96, "ACT": 0.95, "CLARIFY": 0.90, "ACKNOWLEDGE": 0.95, "skill": 0.97}
# The fourth (routing_frozen4.jsonl, 0.903 blind), tuned on from issue 31's fourth round; floors a little under
# what the shipped weights reach with the default embedder (see bench/RESULTS.md, 2026-11-29).
FLOOR_TUNING_4 = {"overall": 0.97, "ACT": 0.96, "CLARIFY": 0.94, "ACKNOWLEDGE": 0.97, "skill": 0.97}
# The fifth (routing_frozen5.jsonl, 0.960 blind), tuned on from issue 31's fifth round: 0.984 overall, ACT 0.973,
# CLARIFY 0.967, ACKNOWLEDGE 0.987, skill 107/107 with the default embedder; floors a little under.
FLOOR_TUNING_5 = {"overall": 0.97, "ACT": 0.95, "CLARIFY": 0.93, "ACKNOWLEDGE": 0.96, "skill": 0.97}
# The sixth (routing_frozen6.jsonl, 0.908 blind), tuned on from issue 31's sixth round: 0.978 overall, ACT 0.964,
# CLARIFY 1.000, ACKNOWLEDGE 0.987, skill 106/106 with the default embedder; floors a little under.
FLOOR_TUNING_6 = {"overall": 0.96, "ACT": 0.94, "CLARIFY": 0.96, "ACKNOWLEDGE": 0.96, "skill": 0.97}
# The seventh (routing_frozen7.jsonl, 0.925 blind), tuned on from issue 31's seventh round: 0.979 overall, ACT 0.991,
# CLARIFY 0.917, ACKNOWLEDGE 0.987, skill 109/109 with the default embedder; floors a little under.
FLOOR_TUNING_7 = {"overall": 0.96, "ACT": 0.97, "CLARIFY": 0.90, "ACKNOWLEDGE": 0.96, "skill": 0.97}
# The eighth (routing_frozen8.jsonl, 0.931 blind), tuned on from issue 31's eighth round: 0.979 overall, ACT 0.982,
# CLARIFY 0.933, ACKNOWLEDGE 0.974, skill 108/108 with the default embedder; floors a little under.
FLOOR_TUNING_8 = {"overall": 0.96, "ACT": 0.96, "CLARIFY": 0.90, "ACKNOWLEDGE": 0.95, "skill": 0.97}
# The ninth (routing_frozen9.jsonl, measured blind once: 0.928, CLARIFY 0.783 on main 34b8f34), tuning material since;
# after issue 31's ninth round: 0.963 overall, ACT 0.945, CLARIFY 0.933, ACKNOWLEDGE 0.987, skill 102/104; floors a
# little under.
FLOOR_TUNING_9 = {"overall": 0.95, "ACT": 0.93, "CLARIFY": 0.91, "ACKNOWLEDGE": 0.96, "skill": 0.96}
# The tenth (routing_frozen10.jsonl, measured blind once: 0.944, CLARIFY 0.733 on main b2736db), tuning material since;
# after issue 31's ninth round (a request's object read from its parse): 0.981 overall, ACT 0.991, CLARIFY 0.933,
# ACKNOWLEDGE 0.974, skill 108/109 (its held-out third 0.960, CLARIFY 17/21); floors a little under.
FLOOR_TUNING_10 = {"overall": 0.97, "ACT": 0.97, "CLARIFY": 0.91, "ACKNOWLEDGE": 0.95, "skill": 0.97}
# The eleventh (routing_frozen11.jsonl, measured blind once: 0.917, ACT 0.918, CLARIFY 0.783, ACKNOWLEDGE 0.936 on main
# 00b14af), tuning material since; after issue 31's tenth round (what a request leaves out, read from its form): 0.973
# overall, ACT 0.964, CLARIFY 0.967, ACKNOWLEDGE 0.949, skill 106/106 (its held-out third 0.936); floors a little under.
FLOOR_TUNING_11 = {"overall": 0.96, "ACT": 0.95, "CLARIFY": 0.95, "ACKNOWLEDGE": 0.93, "skill": 0.97}
# The twelfth (routing_frozen12.jsonl, measured blind once: 0.947, ACT 0.973, CLARIFY 0.850, ACKNOWLEDGE 0.949 on main
# 27d26e3), tuning material since; after issue 31's eleventh round (what someone else put forward is a pointer, more
# ways to show stored things, spoken clock times alone, "What a day." no question): 0.973 overall, ACT 0.982, CLARIFY
# 0.950, ACKNOWLEDGE 0.962, skill 107/108 (its held-out third 0.928 -> 0.936); floors a little under.
FLOOR_TUNING_12 = {"overall": 0.96, "ACT": 0.97, "CLARIFY": 0.93, "ACKNOWLEDGE": 0.95, "skill": 0.97}
# The thirteenth (routing_frozen13.jsonl, measured blind once: 0.917, ACT 0.927, CLARIFY 0.833, ACKNOWLEDGE 0.936 on
# main c229494), tuning material since; after issue 31's twelfth round (a long day told as it went, pointers never named
# here, data kept elsewhere, commands carrying their content, keys held with digits): 0.984 overall, ACT 0.991, CLARIFY
# 0.967, ACKNOWLEDGE 0.987, skill 108/109 (its held-out third 0.936 -> 0.952); floors a little under.
FLOOR_TUNING_13 = {"overall": 0.97, "ACT": 0.98, "CLARIFY": 0.95, "ACKNOWLEDGE": 0.97, "skill": 0.97}
# The fourteenth (routing_frozen14.jsonl, measured blind once: 0.947, ACT 0.973, CLARIFY 0.850, ACKNOWLEDGE 0.962 on
# main b0a7d49), tuning material since; after issue 31's thirteenth round (entries left empty, a deed done again on a
# list, which time suits said to nothing asked, "why do I ...?" after a told statement, a learner's pointer): 0.973
# overall, ACT 0.973, CLARIFY 0.950, ACKNOWLEDGE 0.974, skill 106/107 (its held-out third 0.920 -> 0.920); floors a
# little under.
FLOOR_TUNING_14 = {"overall": 0.96, "ACT": 0.96, "CLARIFY": 0.93, "ACKNOWLEDGE": 0.96, "skill": 0.97}
# The fifteenth (routing_frozen15.jsonl, measured blind once: 0.947, ACT 0.955, CLARIFY 0.883, ACKNOWLEDGE 0.974 on
# main bf62023), tuning material since; after issue 31's fourteenth round (a day with its part of the day, an entry
# filled by a pointer, a thing held in something handed over unseen, a placeholder word after a colon, "like the ones
# you set for ...", a question tagged "remind me", "is there a way to ...", "give me a shout at ...", "run me through",
# relative clauses, "would you believe it, ...", sorting a whole undertaking, zigzag and symbol mash): 0.989 overall,
# ACT 0.982, CLARIFY 0.983, ACKNOWLEDGE 1.000, skill 108/108 (its held-out third 0.968 -> 0.968); floors a little
# under.
FLOOR_TUNING_15 = {"overall": 0.97, "ACT": 0.97, "CLARIFY": 0.96, "ACKNOWLEDGE": 0.98, "skill": 0.98}
# The sixteenth (routing_frozen16.jsonl, measured blind once: 0.944, ACT 0.936, CLARIFY 0.900, ACKNOWLEDGE 0.949 on
# main ba91217), tuning material since; after issue 31's fifteenth round (mash among symbols, told past deeds and dead
# machines, terse or particle shows, goals asked as things, stranded prepositions, "INSERT ... HERE", unseen photos,
# unoffered choices, "the house stuff"): 0.987 overall, ACT 0.991, CLARIFY 0.967, ACKNOWLEDGE 0.987, skill 108/109 (its
# held-out third 0.960 -> 0.960); floors a little under.
FLOOR_TUNING_16 = {"overall": 0.97, "ACT": 0.97, "CLARIFY": 0.95, "ACKNOWLEDGE": 0.97, "skill": 0.98}
# The seventeenth (routing_frozen17.jsonl, measured blind once: 0.939, ACT 0.945, CLARIFY 0.833, ACKNOWLEDGE 0.962 on
# main 5f42749), tuning material since; after issue 31's sixteenth round (facts cut off on their verb, attached or
# scanned content, filler text, "the thing about X" and "the reminder" with nothing saying which, edits made as things,
# a learner's present with a past time, mental notes, a learner's "make goal for me", whack/shove onto a list, "put it
# in your notes that ...", "shw", "remind me again — <question>", news labels, digit-row walks and accented mash):
# 0.984 overall, ACT 0.982, CLARIFY 0.950, ACKNOWLEDGE 0.987, skill 108/108 (its held-out third 0.952 -> 0.952);
# floors a little under.
FLOOR_TUNING_17 = {"overall": 0.97, "ACT": 0.97, "CLARIFY": 0.93, "ACKNOWLEDGE": 0.97, "skill": 0.98}
# The eighteenth (routing_frozen18.jsonl, measured blind once: 0.947, ACT 0.945, CLARIFY 0.817, ACKNOWLEDGE 0.974 on
# main 31d0ede), tuning material since; after issue 31's seventeenth round (slots left as a format or a name, facts
# cut off on "which is" or ", it's", things held in a photo or an email never seen, pointers turned into entries, vague
# deeds on "the X thing" or a stretch of time, headings over empty quoted entries, last-key slips and texted "wot",
# "keep tabs on", "knock ... off" a list, headlines, "hopeless" of a thing): 0.984 overall, ACT 0.982, CLARIFY 0.950,
# ACKNOWLEDGE 1.000, skill 108/108 (its held-out third 0.952 -> 0.952); floors a little under.
FLOOR_TUNING_18 = {"overall": 0.97, "ACT": 0.97, "CLARIFY": 0.93, "ACKNOWLEDGE": 0.98, "skill": 0.98}
# The nineteenth (routing_frozen19.jsonl), measured blind once on main 5ea8087: 0.944, ACT 0.936, CLARIFY 0.833,
# ACKNOWLEDGE 0.974, skill 100/103; tuning material since; after issue 31's eighteenth round (a program's slots "{0}"
# and "#X#", a photo named by what it shows, "nudge/ping me" about what someone said, headings over empty entries on
# lines of their own, "get my year organised", "set me up a list", items slipped onto a list, "I need a list: ...", "90
# minutes from now", a stray key, "would you look at that", a worry that passed, "keep that as a goal", "bring my goals
# up"): 0.979 overall, ACT 0.982, CLARIFY 0.933, ACKNOWLEDGE 1.000, skill 107/108 (its held-out third 0.936 -> 0.936);
# floors a little under.
FLOOR_TUNING_19 = {"overall": 0.97, "ACT": 0.97, "CLARIFY": 0.92, "ACKNOWLEDGE": 0.98, "skill": 0.98}
# The twentieth (blind once: 0.947, ACT 0.964, CLARIFY 0.817, ACKNOWLEDGE 0.962, skill 105/106); after issue 31's
# nineteenth round (hedged bare answers, more template styles and empty forms, unseen messages, news opened by a cry):
# 0.992 overall, ACT 0.991, CLARIFY 0.983, ACKNOWLEDGE 1.000, skill 109/109 (its held-out third 0.976 -> 0.976); floors
# a little under.
FLOOR_TUNING_20 = {"overall": 0.98, "ACT": 0.98, "CLARIFY": 0.97, "ACKNOWLEDGE": 0.98, "skill": 0.98}
# The twenty-first (blind once on main ee8bda5: 0.952, ACT 0.927, CLARIFY 0.883, ACKNOWLEDGE 0.987, skill 101/102);
# floors a little under until it is tuned on.
FLOOR_TUNING_21 = {"overall": 0.97, "ACT": 0.94, "CLARIFY": 0.95, "ACKNOWLEDGE": 0.98, "skill": 0.98}
# The twenty-second (blind once on main fde0f78: 0.925, ACT 0.909, CLARIFY 0.800, ACKNOWLEDGE 0.987, skill 99/100);
# after issue 31's twenty-first round (facts held on to, memos, "shout me at ...", goals opened or made of a deed,
# entries on a card in a photo, a time "the same as last Friday", "I need reminding", empty goal fields, a holiday
# handed over, keys held, "nice one, appreciated"): 0.979 overall, ACT 0.991, CLARIFY 0.933, ACKNOWLEDGE 1.000, skill
# 108/109 (its held-out third 0.936 -> 0.944); floors a little under.
FLOOR_TUNING_22 = {"overall": 0.97, "ACT": 0.98, "CLARIFY": 0.92, "ACKNOWLEDGE": 0.99, "skill": 0.98}
# The twenty-third (blind once on main b4bb807: 0.920, ACT 0.927, CLARIFY 0.717, ACKNOWLEDGE 0.987, skill 101/102);
# after issue 31's twenty-second round (filler and interpolation slots for content, a pointer made vague by a clause of
# when or a train's time before it, "those <things> we discussed", a container's contents, a day's numbers put against
# a goal, "do exactly the same", hedges of several words, lettered entries left empty, goals put in of a kind or a
# rhythm, a command to show after a question, symbol keys held in turn): 0.963 overall, ACT 0.964, CLARIFY 0.867,
# ACKNOWLEDGE 0.987, skill 105/106 (its held-out third 0.928, unchanged); floors a little under.
FLOOR_TUNING_23 = {"overall": 0.96, "ACT": 0.96, "CLARIFY": 0.86, "ACKNOWLEDGE": 0.98, "skill": 0.98}
# The twenty-fourth (blind once on main 355ee07: 0.933, ACT 0.945, CLARIFY 0.750, ACKNOWLEDGE 0.987, skill 104/104);
# after issue 31's twenty-third round (chores named as a situation or an issue, what someone else said or listed,
# content that came in a box or with a thing, hollow circles or squares left empty, assent, a condition or a day that
# suits with its reason said to no question, what was kept then "show me" / "pull it up", "hang on to" and a detail kept
# by its kind given in the next sentence, a list named with its items after "with", a mood said as slight, a question in
# a last clause without its mark, Latin keys held in turn and a row's chunk typed twice): 0.976 overall, ACT 0.991,
# CLARIFY 0.867, ACKNOWLEDGE 1.000, skill 109/109 (its tuned thirds 0.936 -> 1.000, its held-out third 0.928,
# unchanged); floors a little under.
FLOOR_TUNING_24 = {"overall": 0.97, "ACT": 0.98, "CLARIFY": 0.86, "ACKNOWLEDGE": 0.99, "skill": 0.98}
# The twenty-fifth (blind once on main 0ddda9e: 0.939, ACT 0.955, CLARIFY 0.767, ACKNOWLEDGE 0.974, skill 105/105);
# after issue 31's twenty-fourth round (answers to nothing asked: a clock as said that suits, a pick set against another
# or with a condition, a count in words or "-ish" guessed at; entries under a label cut off; ones picked out by when
# they were made, what was done with them, what someone needs or likes; chores named in a few words; content on paper
# said in a clause after the request, a value named by where it is written, a recipe's ingredients; more of nothing
# named, a correction of nothing said; a reminder lacking only its time however its text names things; goals followed
# or asked "4 me"; what was kept then ", pull it up"; disbelief or a shrug around news): 0.981 overall, ACT 0.982,
# CLARIFY 0.950, ACKNOWLEDGE 1.000, skill 108/108 (its tuned thirds 0.940 -> 1.000, its held-out third 0.936 -> 0.944);
# floors a little under.
FLOOR_TUNING_25 = {"overall": 0.97, "ACT": 0.97, "CLARIFY": 0.93, "ACKNOWLEDGE": 0.99, "skill": 0.98}
# The twenty-sixth (blind once on main df70e51: 0.925, ACT 0.891, CLARIFY 0.817, ACKNOWLEDGE 0.987, skill 96/98);
# after issue 31's twenty-fifth round (facts handed over in keeping phrases: put away, on record or file, filed under a
# heading, "these two", "this one"; what was handed over then shown, recited, brought back up; a goal declared after a
# lead-in; what ran short never named; typographic template brackets; entries left empty under tildes; a request ending
# on its colon; an entry cut off on "under"; a pick alone by its look; keys held or struck in turn; relief that nobody
# got hurt): 0.979 overall, ACT 0.982, CLARIFY 0.917, ACKNOWLEDGE 1.000, skill 108/108 (its tuned thirds 0.924 ->
# 1.000, its held-out third 0.928 -> 0.936).
FLOOR_TUNING_26 = {"overall": 0.97, "ACT": 0.97, "CLARIFY": 0.90, "ACKNOWLEDGE": 0.99, "skill": 0.98}
# The twenty-seventh (blind once on main fd7693c: 0.968, ACT 1.000, CLARIFY 0.833, ACKNOWLEDGE 0.974, skill 109/110);
# floors a little under. Raised after routing28 (a request to create something cut off on "with"; a task verb left
# without its object, "set a goal to lose"; the ingredients for "that recipe"; "excuse me" abroad before a pointer):
# 0.979 overall, CLARIFY 0.900 (its tuned thirds 0.976 -> 0.992, its held-out third unchanged); after commands29 0.984,
# ACKNOWLEDGE 1.000, skill 110/110 (a dash before a command, "which is more than ...", "I'll get over it").
FLOOR_TUNING_27 = {"overall": 0.97, "ACT": 0.99, "CLARIFY": 0.89, "ACKNOWLEDGE": 0.98, "skill": 0.99}
# The twenty-eighth (blind once on main 87f9226: 0.979, ACT 0.991, CLARIFY 0.933, ACKNOWLEDGE 0.974, skill 108/109);
# floors a little under; raised after commands29 (0.995, ACT 1.000, CLARIFY 0.983, ACKNOWLEDGE 1.000, skill 110/110).
FLOOR_TUNING_28 = {"overall": 0.99, "ACT": 0.99, "CLARIFY": 0.96, "ACKNOWLEDGE": 0.98, "skill": 0.99}
# The twenty-ninth (blind once on main 3a2bfe3: 0.973, ACT 0.991, CLARIFY 0.917, ACKNOWLEDGE 0.987, skill 109/109);
# floors a little under; raised after commands30 (0.992, ACT 1.000, CLARIFY 0.967, ACKNOWLEDGE 1.000, skill 110/110).
FLOOR_TUNING_29 = {"overall": 0.99, "ACT": 0.99, "CLARIFY": 0.95, "ACKNOWLEDGE": 0.98, "skill": 0.99}
# The thirtieth (blind once on main 9e0e202: 0.960, ACT 0.982, CLARIFY 0.817, ACKNOWLEDGE 1.000, skill 106/108);
# floors a little under; raised after commands31 (0.984, ACT 0.991, CLARIFY 0.950, skill 108/109).
FLOOR_TUNING_30 = {"overall": 0.98, "ACT": 0.98, "CLARIFY": 0.93, "ACKNOWLEDGE": 0.99, "skill": 0.98}
# The thirty-first (blind once after commands31: 0.973, ACT 0.991, CLARIFY 0.867, ACKNOWLEDGE 1.000, skill 107/109);
# floors a little under.
FLOOR_TUNING_31 = {"overall": 0.96, "ACT": 0.98, "CLARIFY": 0.85, "ACKNOWLEDGE": 0.99, "skill": 0.97}


def load_set() -> list[dict]:
    with ROUTING_SET.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def configs_dir() -> Path:
    """The shipped weights and exemplars."""
    return ROOT / "configs"


def evaluate(router: ModeRouter, rows: list[dict], embedder=None) -> tuple[Counter, list[tuple[int, dict, str]]]:
    """Route every row; return the (expected, got) confusion counts and the misses with their line index."""
    confusion: Counter = Counter()
    misses = []
    for index, row in enumerate(rows):
        embedding = embedder.embed(row["text"]) if embedder is not None and row["text"].strip() else None
        mode = router.route(context_from_record(row["text"], row.get("context"), embedding)).mode
        confusion[(row["mode"], mode)] += 1
        if mode != row["mode"]:
            misses.append((index, row, mode))
    return confusion, misses


def report(title: str, confusion: Counter, misses: list) -> None:
    """Print the per-mode confusion matrix and the misses."""
    print(f"\n{title}: rows = expected, columns = routed")
    print(" " * 12 + "".join(f"{mode[:7]:>8}" for mode in MODES) + "  recall")
    for expected in MODES:
        row = [confusion[(expected, got)] for got in MODES]
        print(f"{expected:>12}" + "".join(f"{count:>8}" for count in row) + f"  {recall(confusion, expected):.3f}")
    for index, row, got in misses:
        print(f"  miss line {index + 1}: {row['text']!r} expected {row['mode']} got {got}")


def accuracy(confusion: Counter) -> float:
    return sum(confusion[(mode, mode)] for mode in MODES) / sum(confusion.values())


def recall(confusion: Counter, mode: str) -> float:
    total = sum(confusion[(mode, got)] for got in MODES)
    return confusion[(mode, mode)] / total if total else 0.0


def test_routing_set_is_large_balanced_and_well_formed():
    rows = load_set()
    assert len(rows) >= 240
    counts = Counter(row["mode"] for row in rows)
    assert set(counts) == set(MODES)
    # Issue 31's command batch tipped the balance towards ACT; no mode may still dominate or vanish.
    assert all(0.10 <= count / len(rows) <= 0.35 for count in counts.values()), counts
    for row in rows:
        assert set(row) <= {"text", "mode", "context"}
        assert set(row.get("context", {})) <= CONTEXT_KEYS
    keys = [(row["text"], json.dumps(row.get("context"), sort_keys=True)) for row in rows]
    assert len(keys) == len(set(keys)), "duplicate message with the same context"
    assert sum("context" in row for row in rows) >= 20
    assert sum(len(row["text"].split(".")) > 2 for row in rows) >= 5


def _same_message_keys(text: str) -> set[str]:
    words = " ".join(text_view(text).words)
    return {text.strip().lower(), words} if words else {text.strip().lower()}


def test_exemplars_are_not_copies_of_test_messages():
    test_keys = set().union(*(_same_message_keys(row["text"]) for row in load_set()))
    exemplars = load_exemplars(ROOT / "configs" / "router_exemplars.toml")
    copied = [text for texts in exemplars.values() for text in texts if _same_message_keys(text) & test_keys]
    assert copied == []


def _well_formed(path: Path) -> list[dict]:
    rows = load_rows(path)
    assert len(rows) >= 300 and {row["mode"] for row in rows} == set(MODES)
    assert all(row.get("skill") for row in rows if row["mode"] == "ACT")
    assert all(set(row) <= {"text", "mode", "skill", "context"} for row in rows)
    assert all(set(row.get("context", {})) <= CONTEXT_KEYS for row in rows)
    return rows


def _exemplar_keys() -> set[str]:
    exemplars = load_exemplars(ROOT / "configs" / "router_exemplars.toml")
    return set().union(*(_same_message_keys(text) for texts in exemplars.values() for text in texts))


def test_the_once_frozen_sets_are_well_formed_and_their_held_out_thirds_unseen():
    """Their held-out thirds measure something only while none of their lines is copied into the exemplars."""
    assert TUNING_SETS == [TUNING_1, TUNING_2, TUNING_3, TUNING_4, TUNING_5, TUNING_6, TUNING_7, TUNING_8, TUNING_9,
                           TUNING_10, TUNING_11, TUNING_12, TUNING_13, TUNING_14,
                           TUNING_15, TUNING_16, TUNING_17, TUNING_18, TUNING_19, TUNING_20, TUNING_21, TUNING_22,
                           TUNING_23, TUNING_24, TUNING_25, TUNING_26, TUNING_27, TUNING_28, TUNING_29, TUNING_30,
                           TUNING_31]
    first = _well_formed(TUNING_1)  # written apart from the tuning set and the exemplars: no line of theirs
    tuning = set().union(*(_same_message_keys(row["text"]) for row in load_set())) | _exemplar_keys()
    assert [row["text"] for row in first if _same_message_keys(row["text"]) & tuning] == []
    second = _well_formed(TUNING_2)
    hidden = held_out_third(second)
    assert len(hidden) == len(second) // 3
    # Written blind, it shares a few short lines with exemplars older than it ("thanks!"); three of them fell
    # in the held-out third. One more would mean an exemplar was copied from a line tuning never looked at.
    copied = [index for index in hidden if _same_message_keys(second[index]["text"]) & _exemplar_keys()]
    assert len(copied) <= 3
    third = _well_formed(TUNING_3)
    hidden = held_out_third(third)
    copied = [third[index]["text"] for index in hidden if _same_message_keys(third[index]["text"]) & _exemplar_keys()]
    # Two short reactions of its held-out third were exemplars before the set was written; none may be added.
    assert len(copied) <= 2, copied
    fourth = _well_formed(TUNING_4)
    hidden = held_out_third(fourth)
    copied = [fourth[index]["text"] for index in hidden if _same_message_keys(fourth[index]["text"]) & _exemplar_keys()]
    # Five short lines of its held-out third ("Set a reminder.", "cheers mate", ...) were exemplars before the set
    # was written; none may be added.
    assert len(copied) <= 5, copied
    fifth = _well_formed(TUNING_5)
    hidden = held_out_third(fifth)
    copied = [fifth[index]["text"] for index in hidden if _same_message_keys(fifth[index]["text"]) & _exemplar_keys()]
    # One short line of its held-out third was an exemplar before the set was written; none may be added.
    assert len(copied) <= 1, copied
    sixth = _well_formed(TUNING_6)
    hidden = held_out_third(sixth)
    copied = [sixth[index]["text"] for index in hidden if _same_message_keys(sixth[index]["text"]) & _exemplar_keys()]
    # Four short lines of its held-out third were exemplars before the set was written; none may be added.
    assert len(copied) <= 4, copied
    seventh = _well_formed(TUNING_7)
    hidden = held_out_third(seventh)
    copied = [seventh[index]["text"] for index in hidden
              if _same_message_keys(seventh[index]["text"]) & _exemplar_keys()]
    # Two short lines of its held-out third were exemplars before the set was written; none may be added.
    assert len(copied) <= 2, copied
    exemplar_keys = _exemplar_keys()
    for path in (TUNING_8, TUNING_9, TUNING_10, TUNING_11, TUNING_12, TUNING_13, TUNING_14, TUNING_15, TUNING_16,
                 TUNING_17, TUNING_18, TUNING_19, TUNING_20, TUNING_21, TUNING_22, TUNING_23, TUNING_24,
                 TUNING_25, TUNING_26, TUNING_27, TUNING_28, TUNING_29, TUNING_30, TUNING_31):
        rows = _well_formed(path)
        copied = [rows[index]["text"] for index in held_out_third(rows)
                  if _same_message_keys(rows[index]["text"]) & exemplar_keys]
        # The twenty-eighth's held-out third holds one keyboard mash, the thirty-first's one greeting, that were
        # exemplars before the set was written; none may be added.
        assert len(copied) <= (1 if path in (TUNING_28, TUNING_31) else 0), path.name


@pytest.mark.parametrize("path", FROZEN_SETS, ids=[path.stem for path in FROZEN_SETS])
def test_a_frozen_set_is_well_formed(path):
    _well_formed(path)


@pytest.mark.slow
def test_the_second_once_frozen_set_with_the_default_embedder(configs_dir):
    embedder = for_requests(load_embedder("auto"))
    scores = evaluate_with_skills(ModeRouter(configs_dir, embedder), load_rows(TUNING_2), embedder)
    right = sum(n for (verdict, _), n in scores.skills.items() if verdict == "right")
    print(f"\nsecond once-frozen set {scores.accuracy():.3f}, ACT {scores.recall('ACT'):.3f}, "
          f"CLARIFY {scores.recall('CLARIFY'):.3f}, skill {right}/{sum(scores.skills.values())}")
    assert scores.accuracy() >= FLOOR_TUNING_2_OVERALL
    assert scores.recall("ACT") >= FLOOR_TUNING_2_ACT
    assert scores.recall("CLARIFY") >= FLOOR_TUNING_2_CLARIFY
    assert scores.real_to_ignore() == 0
    assert right / sum(scores.skills.values()) >= FLOOR_TUNING_2_SKILL


@pytest.mark.slow
@pytest.mark.parametrize(("path", "floors"), [(TUNING_3, FLOOR_TUNING_3), (TUNING_4, FLOOR_TUNING_4),
                                              (TUNING_5, FLOOR_TUNING_5), (TUNING_6, FLOOR_TUNING_6),
                                              (TUNING_7, FLOOR_TUNING_7), (TUNING_8, FLOOR_TUNING_8),
                                              (TUNING_9, FLOOR_TUNING_9), (TUNING_10, FLOOR_TUNING_10),
                                              (TUNING_11, FLOOR_TUNING_11), (TUNING_12, FLOOR_TUNING_12),
                                              (TUNING_13, FLOOR_TUNING_13), (TUNING_14, FLOOR_TUNING_14),
                                              (TUNING_15, FLOOR_TUNING_15), (TUNING_16, FLOOR_TUNING_16),
                                              (TUNING_17, FLOOR_TUNING_17), (TUNING_18, FLOOR_TUNING_18),
                                              (TUNING_19, FLOOR_TUNING_19), (TUNING_20, FLOOR_TUNING_20),
                                              (TUNING_21, FLOOR_TUNING_21), (TUNING_22, FLOOR_TUNING_22),
                                              (TUNING_23, FLOOR_TUNING_23), (TUNING_24, FLOOR_TUNING_24),
                                              (TUNING_25, FLOOR_TUNING_25), (TUNING_26, FLOOR_TUNING_26),
                                              (TUNING_27, FLOOR_TUNING_27), (TUNING_28, FLOOR_TUNING_28),
                                              (TUNING_29, FLOOR_TUNING_29), (TUNING_30, FLOOR_TUNING_30),
                                              (TUNING_31, FLOOR_TUNING_31)],
                         ids=["third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                              "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
                              "seventeenth", "eighteenth", "nineteenth", "twentieth", "twenty-first", "twenty-second",
                              "twenty-third", "twenty-fourth", "twenty-fifth", "twenty-sixth",
                              "twenty-seventh", "twenty-eighth", "twenty-ninth", "thirtieth", "thirty-first"])
def test_a_later_once_frozen_set_with_the_default_embedder(configs_dir, path, floors):
    embedder = for_requests(load_embedder("auto"))
    scores = evaluate_with_skills(ModeRouter(configs_dir, embedder), load_rows(path), embedder)
    right = sum(n for (verdict, _), n in scores.skills.items() if verdict == "right")
    got = {"overall": scores.accuracy(), **{mode: scores.recall(mode) for mode in ("ACT", "CLARIFY", "ACKNOWLEDGE")},
           "skill": right / sum(scores.skills.values())}
    print(f"\n{path.stem} {got}")
    assert {name: value >= floors[name] for name, value in got.items()} == dict.fromkeys(floors, True)
    assert scores.real_to_ignore() == 0


def test_signals_alone_route_the_set(configs_dir):
    confusion, misses = evaluate(ModeRouter(configs_dir), load_set())
    report("signals only (no embedding)", confusion, misses)
    assert accuracy(confusion) >= FLOOR_SIGNALS_ONLY


@pytest.mark.slow
def test_routing_set_accuracy_with_the_default_embedder(configs_dir):
    # What a deployment routes with (ENGRAM_EMBEDDER=auto: messages by the int8 graph with int8 activations).
    embedder = for_requests(load_embedder("auto"))  # the graph a message is embedded by
    assert embedder.model_id.endswith("-w8a8")
    assert_routes_the_set(configs_dir, embedder)


def assert_routes_the_set(configs_dir, minilm):
    rows = load_set()
    router = ModeRouter(configs_dir, minilm)
    confusion, misses = evaluate(router, rows, minilm)
    report("all-MiniLM-L6-v2, whole set", confusion, misses)
    held = held_out(rows)
    held_confusion, held_misses = evaluate(router, held, minilm)
    report("held-out (every 5th line)", held_confusion, held_misses)
    print(f"\naccuracy {accuracy(confusion):.3f} on {len(rows)} messages, "
          f"held-out {accuracy(held_confusion):.3f} on {len(held)}")
    assert accuracy(confusion) >= FLOOR_OVERALL
    assert all(recall(confusion, mode) >= FLOOR_PER_MODE for mode in MODES)
    assert accuracy(held_confusion) >= FLOOR_HELD_OUT
    first_confusion, _ = evaluate(router, load_rows(TUNING_1), minilm)
    print(f"first once-frozen set {accuracy(first_confusion):.3f}, ACT {recall(first_confusion, 'ACT'):.3f}, "
          f"CLARIFY {recall(first_confusion, 'CLARIFY'):.3f}")
    assert accuracy(first_confusion) >= FLOOR_TUNING_1_OVERALL
    assert recall(first_confusion, "ACT") >= FLOOR_TUNING_1_ACT
    assert recall(first_confusion, "CLARIFY") >= FLOOR_TUNING_1_CLARIFY
    assert sum(first_confusion[(mode, "IGNORE")] for mode in MODES if mode != "IGNORE") == 0
