"""Words that fill no slot of a request (``services/router/signals.slot_signals``): the skills' own words, quantifiers,
and the words of editing or forgetting that do not say which item."""

from __future__ import annotations

SKILL_WORDS = frozenset(
    "remind reminder reminders set alarm timer schedule reschedule calendar add put remove delete list lists shopping "
    "grocery groceries todo to-do remember note save goal goals new track please can could you me my book up make "
    "take keep mind jot write down don't forget create start store log record progress later memory following info "
    "information tasks checklist wishlist called named need want like pop chuck throw stick bung whack slap shove hang "
    "off onto slip tuck toss lob sneak squeeze "
    "storing saving setting creating making putting adding starting tracking keeping noting remembering logging "
    "recording popping sticking ping pinging nudge nudging alert alerting buzz buzzing wake item items entry entries "
    "copy safe safely notes "
    # The storing verbs of other languages, and their "this" ("bitte merken:", "guarda esto:").
    "merken merk dir notieren speichern apunta anota guarda recuerda notez retiens enregistre esto eso das dies cela"
    .split()
)
# Quantifiers name no item of their own: "put them all on my list" still says nothing of what.
QUANTIFIERS = frozenset("all both each every whole".split())
# Words of editing/forgetting requests that do not say *which* item: "Delete the reminder." still needs one.
MANAGE_WORDS = frozenset(
    "cancel delete remove clear stop pause turn off disable snooze move push shift postpone change update edit "
    "reminding pinging nudging bugging uncheck untick check tick cross strike mark complete completed finish "
    "finished close drop abandon archive raise lower done create start open called named empty wipe reset rename "
    "forget unlearn erase purge told said mentioned shared wrote know remember learned learnt stored saved memory "
    "appointment appointments meeting meetings event events notification notifications item items entry "
    # How far a thing is moved says no more which one than where to (``SHIFT_WORDS``): "push that one on a bit".
    "bit tad".split()
)
