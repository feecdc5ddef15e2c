"""Lexicons of commands: the verbs that open one, placeholders where a command's object would be, a command closing
a message on a pointer, and a label that only looks like one (vague asks: ``services/router/vague_words.py``).

Compiled once at import (pure data, no I/O), like ``services/router/words.py``; ``services/router/signals.py`` turns
them into ``imperative`` and ``names_nothing``.
"""

from __future__ import annotations

import re

from services.router.form_words import NEWS_CRY
from services.router.time_words import DAYS, MONTHS
from services.text import NEAREST, any_of

# A verb with the person as its object opens a request: "teach me ...", "convince me to ...", "walk us through",
# also after a first clause ("Just a quick one: show me how ...").
# Not "excuse me", "lucky me", "trust me" (said, not asked), nor a pronoun or an auxiliary before "me".
VERB_ME_RE = re.compile(
    r"(?:^|[.:;!?]\s+)(?!(?:excuse|lucky|poor|silly|trust|beats|bless|love|like|miss|with|about|for|to|from|of|and|"
    r"but|not|even|just|let|help)\b)"
    # Nor a deed done to the person, told in the past: "Took me four weekends", "cost us a fortune", "asked me twice".
    r"(?!(?:[a-z]*[^e]ed|took|gave|told|sent|made|got|kept|left|brought|bought|cost|caught|taught|drove|woke|found|"
    r"threw|knew|saw|held|paid|sold|lent|met|fed|bit|rang|won|lost|did|had|drew|wrote|shook|"
    r"showed|stole|spent) (?:me|us)\b)"
    r"[a-z]+ (?:me|us)\b(?! (?:too|neither|either)\b)"
)
# "Update: I sold the car!": a word before a colon labels what follows, it commands nothing; so does news named with
# where it is from ("Update from the studio:"), a headline ("Shift changed:") and a call to hear news ("Get this: ...").
LABEL_RE = re.compile(
    r"^[a-z]+\s*:|^(?:(?:a |an )?(?:quick|small|little|big|short|weekly|daily|latest|good|bad) )?(?:update|news|report|"
    r"status|progress report)(?: (?:from|on|about|re|for) [^:.!?\n]{1,40})?\s*:|"
    r"^(?:get this|guess what|listen to this|you'll never guess what)\s*[:!,.-]|"
    # A cry of surprise shaped as a command opens news: "Stop the press: ...", "Well, blow me down, ...".
    rf"^(?:(?:well|oh|wow|gosh|ooh)[ ,!.]+)*(?:{NEWS_CRY})|"
    # A headline, a thing and what happened to it: "Shift changed: I'm on earlies", "Rota sorted: ...".
    r"^[a-z'-]+ (?:[a-z]{2,}ed|done|gone|sold|won|lost|paid|sent|made|met|found|taken|broken|over|sorted)\s*:|"
    # A count reached against its total, told by a verb whose past is its base: "Read 9 of the 12 books so far", "hit 8
    # out of my 10 targets this month" (a command would not count what it asks against a total).
    r"^(?:read|hit|set|put|cut|run|quit|shut) (?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"half|most|all) (?:of|out of) (?:the|my|our) \d+\b|"
    # A thing come at last, its word a verb's: "Clear skies at last", "Open roads at last!" (no command says "at last").
    r"^[a-z]+ [a-z]+s at (?:long )?last\b"
)
IMPERATIVE_VERBS = frozenset(
    "add book buy call cancel change check delete do email explain find fix get give help keep let list make move "
    "note open plan put read remember remind remove reply reschedule save schedule send set share show summarize "
    "summarise take tell text track translate update write draft describe compare suggest recommend create start "
    "stop finish forward message sort clear mark print erase rename uncheck untick snooze unlearn store log record "
    "use brainstorm teach convince outline rank pick choose calculate convert design devise invent propose arrange "
    "organise organize handle "
    # Moving a thing in time or place: "bump it back an hour", "swap them round", "push it to Friday".
    "bump push pull bring shift switch swap flip copy"
    .split()
)
# A command closing a message on a pointer: "the earlier time works better, switch it", "love it. send that to Mia".
POINTER_COMMAND_RE = re.compile(
    rf"[,;.!]\s*(?:(?:and|so|then|just|now|pls|please) )*(?:{'|'.join(sorted(IMPERATIVE_VERBS))}|go with|stick with) "
    r"(?:it|that|this|them|those|these)\b[^,;.!?:]{0,25}[.!]*\s*$"
)
# Deeds: commands that do something to a thing (store it, send it, move it, book it, edit it), as against asking for
# an answer (explain, tell, suggest, write). A deed no skill's pattern reads names no object the assistant could act
# on ("Send the version with the jokes in", "Push everything back an hour.", "move my thing to friday"): it needs
# asking. "Do" and "make" are deeds on a pointer only ("do the same for the van", "make it 3 instead of 2"; not "make
# me a list of questions"), and a deed for the person that asks for something new gives it ("send me a joke").
_DEEDS = (
    "add send forward book move push pull bump shift switch swap put set cancel change update edit delete remove store "
    "save note log keep track remember remind mark tick cross sort fix handle use take email text message reply rename "
    "finish stop clear erase copy arrange organise organize schedule reschedule snooze jot stick pop chuck bung throw "
    "uncheck untick record pay call file"
)
# Passing word on to someone is a deed too: "Tell my boss", "ask her about it", "let them know I'm late" (not "tell me
# ...", "tell a joke": those want an answer).
_PASS_ON = (
    r"(?:tell|ask|warn|text|email|message|call) (?:him|her|them|(?:my|our|the) (?:[a-z'-]+ )?(?:"
    + any_of(NEAREST, "gran grandma grandad kids family friend friends colleague colleagues team manager boss landlord "
             "teacher client customer neighbour neighbours neighbor neighbors".split())
    + r")\b)|let (?!(?:me|us)\b)[a-z'-]+(?: [a-z'-]+)? know\b"
)
# After a first clause a deed starts after a stop or "so" / "now" / "then" ("Lucy's coming too so add her bits"), but
# not with the verbs whose past is their base form ("we got home so put the kettle on" tells).
_PAST_AS_BASE = {"put", "set"}
DEED_VERBS = frozenset(_DEEDS.split())
_DEED_VERBS = "|".join(sorted(DEED_VERBS))
_MID_DEED_VERBS = "|".join(sorted(DEED_VERBS - _PAST_AS_BASE))
_ASKING = r"please|pls|plz|kindly|can you|could you|would you|will you|can u|could u|would u"
# Asked for, or turned to after a story ("... Anyway, can you put in what I told you before?", "... Anyway, put in
# what we said"): "put" and "set" are then no past.
_ASK_LEAD = rf"(?:(?:anyway|anyhow|by the way)[ ,!.]+(?:(?:{_ASKING}|just)[ ,!.]+)*|(?:(?:{_ASKING})[ ,!.]+)+)"
_DEED_LEAD = (rf"(?:(?:{_ASKING}|just|actually|"
              r"now|ok|okay|so|and|also|then|i (?:need|want|would like) you to|i'?d like you to)[ ,!.]+)*")
# A deed's verb is followed by its object (a pointer, a determiner, a possessive, a placeholder), maybe after "me" or
# a particle: "Push everything back", "forward me the file"; not a noun phrase typed as a topic ("Cancel culture",
# "Email etiquette for managers", "Record player recommendations") nor "add up 345 and 789".
_DEED_OBJECT = (
    r"(?: (?:me|us)(?= (?:the|that|those|it|them|this|these|my|our|what|whatever)\b))?"
    r"(?: (?:up|back|off|out|in|down|over|round|around|forward|away))?"
    r"(?: (?:it|that|this|them|those|these|the|a|an|my|our|his|her|their|your|him|everything|all|both|some|something|"
    r"anything|what|whatever|whichever|one|same|next|last|another|other|any|each|every|few|couple|\d+|"
    rf"[a-z]+'s|(?:{DAYS})\w*)\b|"
    # Or no object at all, only when, where or how again: "Send.", "cancel tomorrow", "move to 3", "add more"; or a bare
    # noun that is the whole object ("add item", "save note").
    r" (?:again|more|too|instead|later|asap|please|pls|for|to|on|at|by|till|until|onto|into)\b|(?: [a-z'-]+)?\W*$)"
)
DEED_RE = re.compile(
    rf"(?:^{_DEED_LEAD}(?:(?!add up\b)(?:{_DEED_VERBS}){_DEED_OBJECT}|{_PASS_ON}|"
    # An adverb before the object is no object: "do exactly the same for Thursday", "do just that".
    r"(?:do|make) (?:(?:exactly|just|precisely|basically|pretty much) )?"
    r"(?=(?:it|that|this|them|those|these|the|what|everything|same)\b))|"
    rf"(?:[.;!?]\s+|,\s*(?:so|now|then) |\b(?:so|now|then) )(?:{_DEED_LEAD}(?:{_MID_DEED_VERBS})|"
    # Asked for, "put" and "set" are no past: "... The curator loved it. Can you set up the checks she suggested?"
    rf"{_ASK_LEAD}(?:{_DEED_VERBS})){_DEED_OBJECT})|"
    # Done again for someone, as before: "... Kindly do for the studio what you did for my sister."
    rf"(?:^|[.;!?]\s+){_DEED_LEAD}do (?:for|to|with) (?:[a-z0-9'-]+ ){{1,3}}?(?:what|whatever|exactly what|the same)\b|"
    # Or after a first sentence: "... The kids ran riot. Do what you did last time, would you?"
    rf"[.;!?]\s+{_DEED_LEAD}do (?:(?:what|whatever|exactly what) (?:you|u) (?:did|done|set up)|the same)\b"
)
# A statement about the person's own things, its subject first: "I set myself a target of 30 books this year", "My wife
# keeps our shopping list on the fridge door". A skill's words in it tell, they ask for nothing, unless a wish opens it
# ("I'd like to set a goal ...", "I need a reminder"), a goal is stated ("my goal for May is ..."), something is handed
# over after a colon, or a clause of it commands (``COMMAND_CLAUSE_RE``).
TOLD_RE = re.compile(
    r"^(?:(?:honestly|well|oh|just|actually|btw|anyway|so|and)[ ,!.]+)*(?:i(?!'d|'ll)|i'm|i've|we|we're|we've|my|our|"
    r"his|her|their|the|this|that|it|it's)\b(?![^.?!]{0,30}\b(?:want|wants|wanted|need|needs|'d like|would like|"
    r"'d love|would love|wanna|appreciate|aim|aiming|decided|hope|hoping|wish)\b)"
    # Nor one that has the assistant do something: "I'd be grateful if you noted that ...".
    r"(?!.*\b(?:you|u)\b)"
)
# Told, then asked what to do about it: "I found my late dad's to-do list, it just says ... Should I fix the gate?" (the
# question asks advice about the person's own deed; the skill's words were told), or asked why they do as they do ("I
# snooze every reminder I set. Why do I do that?").
OWN_DEED_QUESTION_RE = re.compile(
    r"(?:^|[.!?]\s+)(?:(?:so|but|and|or) )?(?:(?:should|shall) (?:i|we)|"
    r"why (?:do|does|did|am|is|are|can't|won't|don't|doesn't|didn't) (?:i|we|my|our))\b[^.!?]*\?\W*$"
)
GOAL_STATED_RE = re.compile(r"\b(?:goals?|resolutions?|targets?|aims?)\b(?: [^.?!]{0,30}?)? (?:is|are|will be)\b")
_COMMAND_VERBS = "|".join(sorted(IMPERATIVE_VERBS | DEED_VERBS))
COMMAND_CLAUSE_RE = re.compile(  # not a verb quoted: 'his to-do list just says "fix Jean's gate"'
    rf"(?:(?:[^\w\s'\"\u201c\u201d-]|\s-+\s)\s*(?:(?:just|please|pls|now|then|so) )*|"
    rf"\b(?:so|and|then|now|pls|please|but)\s+)"
    rf"(?:(?:don'?t|do not|never) )?(?:{_COMMAND_VERBS})\b"
)
# The object of a request (services/router/objects.py): the words a command's object is made of when it names
# nothing of its own. A request opens a clause, maybe after these (and after a greeting or thanks before a comma).
REQUEST_LEADS = frozenset(
    "please pls plz kindly just now and also then so ok okay oh anyway actually right can could would will you u "
    "i i'd need want like to mind possibly maybe quickly cn cud".split()  # "cn u add ...": texted
)
# The verbs whose object is a thing to act on (a deed's, "do" and "make" of a pointer, "give me a ..."), not those
# that ask for an answer ("tell", "explain", "write", "suggest").
# "Turn that into a goal": what is turned into one is the object.
OBJECT_VERBS = DEED_VERBS | frozenset("do make give scrap ditch bin drop jot note memorise memorize turn convert".split(
))
OBJECT_PARTICLES = frozenset("up down back off out in over away round aside care of".split())
# Where the object goes, or when, or for whom, ends it: "send the same to my brother", "do the same 4 the scouts".
# A new clause ends the object: after a comma ("scrap that one, I don't need it anymore"), or a clause of when, the
# person's own ("remind me about that tomorrow when I'm at my desk": "that" is still all the object says), up to a task
# said after it ("remind me tomorrow when I get home to ring the garage": the garage is the object).
NEW_CLAUSE_RE = re.compile(r",\s*(?:i|i'm|i've|we|we're|he|she|they|it's|it|but|because|cos|as|since|so|and)\b.*$|"
                           r"\s(?:when|while|once|whenever|as soon as) (?:i|i'm|im|i've|we|we're|i'll|we'll)\b"
                           r"(?:(?!\sto\s).)*")
OBJECT_ENDS = frozenset("to into in on onto for 4 at with from by under till until before after via".split())
# A word after these is pointed at, not named: "that goal", "her number", "same text", "the other reminder", "the usual
# bits".
POINTING_MODIFIERS = frozenset("that those this these her his their its same other usual previous last earlier".split())
# Words that point at something said before, in an earlier turn: "the same", "the others", "again", "like before", "as
# well" (more of what was done).
PAST_POINTERS = frozenset(
    "same other others rest remaining again before previous last usual regular earlier above latter former too also "
    "well either "
    "first second third fourth fifth".split()  # "the second one": of the ones offered before
)
# Words that point at something named anywhere, maybe earlier in the message itself: "My code is 4312, remember that".
NEAR_POINTERS = frozenset(
    "it that this them those these one ones her his their its him she he they like as time".split()
)
# Words that name no particular thing: a placeholder ("something", "a thing", "a note") or a determiner.
GENERIC_WORDS = frozenset(
    "a an the some any something anything everything thing things stuff smth sth bit bits item items entry entries "
    "note notes reminder reminders task tasks goal goals target few couple of bunch load several various all both each "
    "every new "
    "me us for my our please pls plz cheers thanks thx ta kindly now here up down back off out over away round aside "
    "quickly".split()
)
# Things named by their kind alone, with "the": "add the things from yesterday's call" (which things?).
KIND_NOUNS = frozenset("thing things stuff bit bits item items entry entries".split())
# A placeholder is said with one of these: "a note", "something", "some stuff" (not "can you set reminders?").
PLACEHOLDERS = frozenset("a an some something anything smth sth few couple bunch several various".split())
# A placeholder for a kind of entry is filled by what follows it: "set a reminder for my flight" (not "add something
# for the kids").
ENTRY_NOUNS = frozenset("reminder reminders note notes task tasks entry entries goal goals target".split())
# Where an entry goes fills it no more: "add a task to my list".
ENTRY_PLACES = frozenset("list lists notes calendar diary planner shopping todo do phone".split())
# Storing what was said needs what it was: "store what I told you about the boat" is no question about the boat.
STORING_VERBS = frozenset("store save keep note record log remember add put jot stick pop file".split())
# "This" kept with nothing but where and for whom, then a comma and a fact, points forward as before a colon: "keep this
# safe for me please, the gate code is 4410" (group 1: the pointer; not "..., the gate code is", cut off; not "sort this
# for me, the kitchen is a mess": no fact to store; not "that" or "it", which point back).
KEPT = r"(?: (?:safe|down|somewhere|for (?:me|us)|please|pls|plz))*"
KEPT_THEN_GIVEN = (rf"\b(?:{'|'.join(sorted(STORING_VERBS))}) (this|these){KEPT},\s*(?:the|my|our)\b[^,.!?:]*?"
                   r"(?:\b(?:is|are)|'s)\s+\S")
# Content handed over after a colon names the deed's object: "sort these: pears, apples, figs" (a train or a bus named
# by its time, as in "I missed the 8:10", hands nothing over); after a comma too (``KEPT_THEN_GIVEN``).
HANDED_OVER_RE = re.compile(rf"(?<!\bthe \d)(?<!\bthe \d\d):\s*\S|{KEPT_THEN_GIVEN}")
# Removing what was said about a topic names it well enough: "delete what I told you about my ex".
# The kinds of thing a skill keeps: "snooze that reminder" points at the reminder just shown, which the skill knows.
STORED_KINDS = frozenset("reminder reminders alarm alarms timer timers goal goals list lists appointment".split())
REMOVING_VERBS = frozenset("delete erase remove clear forget scrap ditch bin drop cancel".split())
# The object opened by what someone said or gave, never named here: "what I told you about the boat", "the thing the
# head of department said", "that one we talked about", "the times the nurse gave me".
SAID_OBJECT_RE = re.compile(
    # Where it goes may come first in a learner's order: "put in my notes the number he gave me".
    # Or what it becomes first: "make my goal what Siobhan suggested".
    r"^(?:(?:in|into|on|onto|to) )?(?:(?:my|our|the|your) (?:[a-z'-]+ )?(?:notes?|lists?|goals?|targets?|memory|diary|"
    r"calendar|reminders?) (?:(?:to|as|be) )?)?"
    r"(?:what|whatever|(?:that|those|these|the|this)(?: [a-z'-]+){0,3}?)"  # "those rehearsals she mentioned"
    # A learner's "what" for "that": "this thing what we discuss".
    r"(?: (?:that|which|what))? (?:i|we|you|u|he|she|they|(?:my|our|his|her|their|the|[a-z]+'s) [a-z'-]+"
    r"(?: of [a-z'-]+)?|"
    # Someone by name: "remind me about what Marek said" (not "what is said", "what was agreed").
    # Or after a kindless noun: "add the stuff Jen said to the party list".
    r"(?:(?<=what )|(?<=stuff )|(?<=things )|(?<=bits )|(?<=ones ))"
    r"(?!(?:is|was|are|were|has|have|had|will|would|can|could|should|must|may|might|do|does|did|a|an|the|"
    r"it|this|that|time)\b)[a-z'-]+)"
    r"(?: (?:just|already|once))? (?:said|told|mentioned|talked about|discussed|gave|sent|showed|wrote|suggested|"
    r"recommended|asked|wanted|agreed|shared|was (?:saying|talking about)|were (?:saying|talking about)|"
    # What someone else put forward: "the prices the supplier quoted", "the points she made", "the dates he proposed";
    # a learner's present for the past: "the number he give me", "the thing we discuss".
    r"quoted|made|raised|proposed|listed|named|flagged|pointed out|brought up|read out|put forward|came up with|"
    r"(?:give|gives|send|sends|tell|tells) (?:me|us)\b|(?<=we )(?:discuss|talk about)|"
    # or with a time before now after it: "the informations I send before", "the list we make yesterday".
    r"(?:send|give|tell|write|say|show|mention|share|make|type)(?: (?:to )?(?:you|u))? (?:before|earlier|already|"
    r"previously|yesterday|last (?:time|week|night)))\b|"
    # What the assistant did before: "do for the studio what you did for my sister".
    r"^(?:what|whatever|exactly what) (?:you|u) (?:did|done|set up)\b|"
    # Ones picked out by when they were made or what was done with them: "sort out those reminders from yesterday",
    # "tick off the ones I've done since lunch", "cross off what we bought" (which ones?).
    r"^(?:the|those|these|them)(?: [a-z'-]+){0,2} from (?:before|earlier|yesterday|last time|the other day)\b|"
    # Or things of no kind from a time past: "add the bits from this morning to my list" (not "the reminders from last
    # week": a kind and a time say which).
    r"^(?:(?:all )?(?:the|those|these)(?: [a-z'-]+)? (?:bits|stuff|things|ones|items|bits and pieces)|them|those|"
    r"these) from (?:this morning|last night|last week|the weekend|earlier on|our (?:last )?(?:chat|call|conversation|"
    r"talk))\b|"
    # Things of no kind from a place, none named: "pop the bits from the market onto my list".
    r"^(?:all )?(?:the|those|these) (?:bits|stuff|things|bits and pieces) from (?:the|that|this|our|my) [a-z'-]+|"
    r"^(?:what|whatever|everything|the ones?|those(?: ones)?|these(?: ones)?|the (?:bits|things|stuff|items))"
    r"(?: that)? (?:i|we)(?:'ve|'d|'re| have| had| are| were)? (?:just |already )?"
    r"(?:done|finished|completed|bought|picked up|packed|used up|"
    r"paid for|booked|sorted|cleared|ticked off|crossed off|got through|dealt with|"
    # What ran short, never named: "add whatever we ran out of last week to the list", "the stuff we're low on".
    r"ran out of|run out of|out of|low on|short of|short on|running (?:low on|out of)|"
    r"(?:got|get|went|ran) low on)(?=\W|$)|"
    # Or what someone else needs or likes, or a thing settled on somewhere else: "add whatever she needs to the list",
    # "move that thing we sorted to Monday" (not a "that" clause: "note that my goats need their hooves trimmed"; what
    # the person needs is theirs to say in a reminder: "remind me at 6 what I need to buy").
    r"^(?:what|whatever|everything|(?:those|these|the|that|this)(?: [a-z'-]+){1,3}?)(?: (?:that|which))? "
    r"(?:(?:i|we|you|u) (?:just |already )?(?=sorted|arranged|planned|booked|organi[sz]ed|set up|picked|chose)|"
    r"(?:he|she|they|(?:my|our|his|her|their|the|[a-z]+'s) [a-z'-]+|(?<=what )(?!(?:i|we|you|u)\b)[a-z'-]+|"
    r"(?<=whatever )(?!(?:i|we|you|u)\b)[a-z'-]+) "
    r"(?:just |already )?)(?:needs?|wants?|likes?|fancy|fancies|ordered|sorted|arranged|planned|"
    # (Told as a fact it names itself: "remember the hotel we booked is the Grand".)
    r"booked|organi[sz]ed|set up|picked|chose)\b(?![^.?!,;]*\b(?:is|are|was|were|will be)\b)"
)
# A placeholder filled by the next sentence, which says what is wanted: "can you make a goal for me? I want to pass the
# B2 exam in June" (not "I want it done today", "I need help").
CONTENT_FOLLOWS_RE = re.compile(
    r"(?:[.!?]+|,)\s*(?:i (?:want|wanna|need|would like|'d like|'m going|am going|hope|plan|aim)(?: to)?|"
    r"(?:it'?s|it is|the goal is|goal is|it should be) to) "
    r"(?!(?:it|that|this|them|something|anything|some|help|to know|you)\b)[a-z]|"
    # Or the next sentence is what is wanted, said in words of its own and asking nothing: "Could you set up a goal
    # for me? Pass the GWO refresher by 20 February.", "... No crisps on weekdays" (not "Thanks!", "Not sure what yet.",
    # "Tomorrow at 9.", nor a "no" that answers: "No, not yet.", "No idea").
    r"[.!?]+\s*(?!(?:i|it|it's|its|that|this|these|those|them|they|something|anything|some|help|you|u|thanks|thank|"
    r"thx|cheers|ta|please|pls|not|yes|yeah|maybe|just|what|which|how|when|where|why|who|can|could|would|will|do|"
    r"does|did|is|are|was|were|the|a|an|ok|okay|sorry|also|and|but|or|so|then|now|tomorrow|today|tonight|at|on|in|by|"
    rf"next|every|from|{DAYS}|{MONTHS})\b)(?!no(?:[,.!;:?]|$| (?:thanks|thank|idea|worries|"
    r"problem|rush|need|clue|way|one|i|it|pressure|hurry)\b))[a-z][a-z'-]*(?: [^\s?]+){2,}[^?]*$"
)
# A thing named by its kind and what it concerns, never said here: "remember the thing about Dad's car" (which thing?).
THING_ABOUT_RE = re.compile(
    r"^(?:the|that|this) (?:whole )?(?:thing|things|stuff|bit|bits|business|matter|issue|situation|story) "
    r"(?:about|with|re|regarding|concerning|from|at)\b")
# One stored thing of a kind picked by "the" alone, moved or changed ("move the reminder to Wednesday": which one?).
THE_STORED_RE = re.compile(
    r"^the (?:reminder|alarm|timer|goal|appointment)(?= (?:to|for|till|until|by|on|at|from|back|forward|earlier|later|"
    r"off|up|an|a|by)\b|\W*$)")
RETIMING_VERBS = frozenset("snooze push bump shift postpone pause delay bring".split())
# An edit asked for as a thing made: "make a change to my goal", "do a quick tweak on the list" (change it to what?).
EDIT_MADE_RE = re.compile(
    r"^(?:a |an |some |one |a few |a couple of |any )?(?:small |quick |little |slight |minor |couple of )?"
    r"(?:change|changes|edit|edits|tweak|tweaks|adjustment|adjustments|update|updates|amendment|amendments|"
    r"correction|corrections) (?:to|on|in)\b\s*")
# Verbs whose "something about ..." names no deed: "do something about my goals", "sort something out with my notes".
VAGUE_DEED_VERBS = frozenset("do sort fix".split())
# Whom a deed is for may come before its object: "do for the studio what you did for my sister".
FOR_WHOM_RE = re.compile(r"^(?:for|to|with) (?:[a-z0-9'-]+ ){1,3}?(?=(?:what|whatever|exactly what)\b)")
# A request's missing slot, read from its form (services/router/objects.py): an unfilled template
# (``TEMPLATE_RE``, in services/router/template_words.py);
# a command cut off before its object ("set a goal to... actually, no", "remind me to"): its last word waits for more;
DANGLING_WORDS = frozenset("to the a an my our your and or of for about with at by".split())
# A fact cut off on its verb, before what it is ("remember that my locker PIN is"), unless the clause asks which or
# how ("remember where the car is", "save it as it is") or the verb follows a pointer ("that's what it is").
COPULAS = frozenset("is are was were".split())
COPULA_OPENERS = frozenset("what where when who whom which how why whatever wherever whenever however as than".split())
COPULA_POINTERS = frozenset("it there here that this they he she we you i".split())
# A relative clause opened on the fact's noun and cut off on its verb: "save my bank PIN which is".
RELATIVE_WORDS = frozenset("which who that".split())
# Or after a comma, on a copula fused with its subject: "store my new PIN, it's".
FUSED_COPULAS = frozenset("it's its that's thats they're theyre".split())
STRANDED_PREPOSITIONS = frozenset("to of for about with at by".split())
# content announced but never given ("memorise the following.");
FORWARD_POINTERS = frozenset("following below".split())
# a reminder with a time and nothing to be reminded of ("remind me at ten past six"): these lead its text in.
REMINDING_VERBS = frozenset("remind".split())
# A call on the person is a reminder: "nudge me about ...", "ping us at 9 to ..." read as "remind me ...".
CALLING_ON_VERBS = frozenset("nudge ping buzz prod poke".split())
TEXT_LEADS = frozenset("to that about of re at on by for in".split())
# Someone's own thing ("her list of must-have shots", "his address") is not named by naming them: unless the message
# names the thing itself ("her number is ..., save her number"), it was said elsewhere.
PERSON_POSSESSIVES = frozenset("her his their".split())
# What one has that is given by its value, ending a two-word noun after theirs: "save his email address" (which?).
OWNED_VALUES = frozenset("address number name code password pin details size handle date".split())
NAMING_WORDS = frozenset("name names first surname title".split())  # "use his first name": no content to give
# An entry picked by its number on a list shown before: "cross off number 3", "delete item 2".
NUMBERED_WORDS = frozenset("number no item entry line option point".split())
# Back to a state said before: "change the goal back to what it was".
PAST_STATE_RE = re.compile(r"\bto (?:what|how|where) (?:it|they|that|this) (?:was|were|used to be)\b")
# An edit needs the new value: "change my running goal" (to what?), not "change my goal to 12,000 steps".
EDITING_VERBS = frozenset("change update edit adjust amend alter modify rename move reschedule".split())
NEW_VALUE_WORDS = frozenset("to into from as by with so".split())
# A fact put somewhere as "it", or only the place said, then given in a "that" clause: "put it in your notes that the
# parking is space 23", "put it on record that I lent Callum the saw", "keep in your records that the code is 47".
_KEPT_PLACE = (r"(?:(?:in|into|on|onto|to) )?(?:(?:your|my|the|our) )?(?:[a-z'-]+ )?"
               r"(?:notes?|memory|diary|records?|files?|"
               r"brain|head|calendar|journal) ")
IT_THAT_RE = re.compile(
    # (The place's preposition may be gone: a request's particle is read off before its object.)
    rf"^(?:it (?:down )?(?:{_KEPT_PLACE})?|(?:down )?{_KEPT_PLACE})(?:down )?"
    r"that (?!(?:one|ones|list|reminder|goal|note)\b)[a-z]")
# A wished-for placeholder told by its purpose ("I need something to read on the plane", "I'd like something to
# switch off to") asks for an idea; "something to be added" is a deed's object all the same.
PURPOSE_RE = re.compile(r"\s+to\s+(?!(?:be|get|have|do)\b)[a-z]")
