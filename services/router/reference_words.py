"""Lexicons of references: what a message points back at, and the words that only look as if they did.

Compiled once at import (pure data, no I/O), like ``services/router/words.py``; ``services/router/signals.py``
turns them into ``has_reference``, ``unresolved_reference``, ``resolved_reference`` and ``points_back``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from services.router.ascii_twin import twinned
from services.router.command_words import KEPT, KEPT_THEN_GIVEN
from services.router.prefilter import prefiltered
from services.router.unseen_words import MADE_FROM_UNSEEN
from services.text import FAMILY, GRANDCHILD, RELATIVE

# People a "he", "her" or "his" in the same message can stand for: "write to my thesis supervisor, use his name".
PEOPLE_WORDS = frozenset((*FAMILY, *RELATIVE, *GRANDCHILD, *(
    "grandma grandpa grandmother grandfather fiance fiancee boss friend colleague manager teacher doctor neighbour "
    "neighbor supervisor tutor professor lecturer coach instructor mentor landlord landlady dentist nurse client "
    "customer roommate flatmate housemate vet therapist trainer "
    "teammate classmate student pupil assistant director principal headteacher lawyer solicitor accountant "
    "plumber builder electrician midwife priest pastor imam rabbi").split()))
# "forget what I told you" points back at the conversation just like "forget that" does.
# So do "the things I mentioned", "what we talked about", "those reminders we discussed" and "the ones from before"
# when nothing follows that names them ("what I told you about my job" names it): they need an earlier turn to point at.
DEICTIC_OBJECT_RE = twinned(
    r"\b(?:what|whatever|everything|the(?: [a-z'-]+){1,2}|(?:those|these)(?: [a-z'-]+){0,2})(?: that)? "
    # Or someone else said it: "add the stuff Mum said to the packing list", "save everything my boss told me".
    rf"(?:i|we|she|he|they|everyone|everybody|(?:my |our |the |your )?(?:{'|'.join(sorted(PEOPLE_WORDS))}|nan|gran|"
    r"granny|grandad)) (?:just |already )?"
    r"(?:told|said|mentioned|shared|wrote|listed|gave|sent|showed|discussed|talked about|agreed(?: on)?|asked(?: for)?|"
    # Handed over where this conversation cannot see: "put what I just pasted into the notes", "the file I uploaded".
    r"pasted|attached|uploaded|forwarded|copied|typed|posted|linked|screenshotted|dictated|"
    # Or made where it cannot see: "the letter I just scanned", "the voice memo I recorded", "the card I photographed".
    r"scanned|photographed|photocopied|recorded|filmed|snapped|emailed|texted|messaged|"
    r"(?:was|were) (?:saying|talking about|discussing|doing|working on))"
    r"(?: (?:to )?(?:you|me|us))?(?: (?:earlier|before|yesterday|last time|just now))?"
    # The clause ends there (with the message or its sentence: "the one I gave you earlier? use that.").
    # "the things I asked you to remember" says what they are (what was kept), it is not "add what I said to ...".
    r"(?=\W*$|\s*[,.?!]|\W+(?:to(?! (?:remember|store|save|keep|note|memori[sz]e|record|log|track)\b)|on|onto|in|into|"
    r"for|please|pls|thanks|thank you|thx|cheers|merci|por favor|bitte)\b)|"
    # "the ones from before", "those reminders from yesterday", "them from the other day": which ones?
    r"\b(?:the(?: [a-z'-]+){1,2}|(?:those|these|them)(?: [a-z'-]+){0,2}) from (?:before|earlier|yesterday|last time|"
    r"the other day)\b|"
    # "carry on where we left off", "pick up from where we stopped": the place in a conversation this one cannot see.
    r"\bwhere (?:we|i|you|u) (?:left off|stopped|finished|were|got to|had got to|broke off)"
    r"(?: (?:earlier|before|yesterday|last time|last night))?(?=\W*$|\s*[,.?!])|"
    # "do what you did last week": what was done then is not in this conversation either.
    r"\bwhat (?:you|we) did (?:last (?:time|week|night|month)|before|yesterday|earlier)\b|"
    # Or done as it always is, or as both sides know: "do what you usually do", "you know what to do" (which is?).
    r"\bwhat (?:you|we) (?:always|usually|normally) do\b|^(?:(?:just|so|ok|okay|well)[,.]? )*you know (?:what to do|"
    r"the drill)\W*$|"
    # "add the items as discussed": what was discussed is not in this conversation until an earlier turn says it.
    r"\bas (?:discussed|agreed|planned|requested|promised|we (?:said|discussed|agreed))"
    r"(?: (?:earlier|before|yesterday|last time))?(?=\W*$|\s*[.!?,;])"  # not "as discussed with my sister, ..."
)


@lru_cache(maxsize=64)  # the reference and slot signals read the same text
def deictic_object(text: str) -> re.Match | None:
    """``DEICTIC_OBJECT_RE.search(text)``, found once for a text that several signals read."""
    return DEICTIC_OBJECT_RE.search(text)


def without_deictic_object(text: str) -> str:
    """``DEICTIC_OBJECT_RE.sub(" ", text)``: the text itself when ``deictic_object`` found nothing in it."""
    return DEICTIC_OBJECT_RE.sub(" ", text) if deictic_object(text) else text


# "This" points forward after a comma too, kept with a fact after it (``KEPT_THEN_GIVEN``): "keep this safe for me
# please, the gate code is 4410"; "note this down: ..." points forward as "note this: ..." does.
CATAPHORIC_RE = twinned(rf"\b(it|this|that|these){KEPT}\s*:\s*\S|{KEPT_THEN_GIVEN}")
# Descriptions that only make sense after something was named, like a pronoun: "the new ones", "the second
# option", "do the same for the others".
ANAPHORIC_NP_RE = prefiltered(
    r"\b(?:the|those|these) (?:(?:new|old|other|first|second|third|last|previous|next|remaining) )?ones\b|"
    # "like the others" is no more said than "the others": "track that one too, like the others" (like which?).
    r"\b(?:(?:like|same as) )?the others\b|\bdo the same\b|\bthe (?:latter|former)\b|\bthe rest\b(?! of)|"
    # "regarding the above", "add the above to my list": above what? (not "the above-mentioned X", which names X).
    r"\b(?:the|as) above\b(?!-)|"
    r"\bthe (?:first|second|third|last|previous|other) (?:one|option|suggestion|idea|choice|link|item|answer|version|"
    r"draft)s?\b|"
    # "use the other address": "other" contrasts with something named before (not "the other day", "on the other hand").
    r"\bthe other (?!(?:day|week|night|morning|evening|time|side|hand|way|half|people)\b)[a-z'-]+|"
    # A choice between things offered before: "the earlier time works better", "the cheaper one", "option B".
    r"\bthe (?:earlier|later|cheaper|dearer|bigger|smaller|shorter|longer|newer|older|quicker|faster|slower) "
    r"(?:one|option|time|date|slot|version|train|flight)s?\b|"
    r"\b(?:option|choice|version|variant|draft|proposal) (?:[a-d]|[1-9]|one|two|three|four)\b(?!\s*:)|"
    # A choice made among offers never made here: "let's go with 10 then", "I'll stick with B" (of what?).
    r"^(?:(?:ok|okay|right|fine|alright|yeah|yes|hmm|um)[ ,.!]+)*(?:let'?s|i'?ll|we'?ll|i will|we will|i'?d|i'?m going "
    r"to|we'?re going to)? ?(?:(?:go|stick|settle) (?:with|for|on)|take|have|pick|choose) (?:the )?(?:\d{1,4}|[a-d]|"
    # Or by its place among them: "I'll take the second".
    r"one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|first|second|third|last|latter|former)"
    r"(?: one)?(?: (?:then|please|pls|i think|i guess|for now))*\W*$"
)
# "It" of the time and the weather points at nothing: "what time is it in Tokyo?", "is it going to rain?".
EXPLETIVE_IT_RE = re.compile(
    r"\bwhat time is it\b|\bhow (?:far|long) is it\b|\b(?:is it|it'?s|it is|it was|was it)(?: going to| gonna)? "
    r"(?:rain|snow|raining|snowing|sunny|cloudy|cold|hot|warm|windy|freezing|late|early|getting late)\b"
    # a cleft's "it" points at the answer asked for: "Who is it I support again?", "what was it that my sister said"
    r"|\b(?:who|what|where|when|which|why|how)(?:'s| is| was)\s+it\s+(?:that\s+)?(?:i|i'm|im|we|my|our|you|me)\b"
    # An idiom's "it" is the person's own lot, said in the same breath: "Not my best day, but I'll get over it".
    r"|\b(?:i|we)(?:'ll| will|'m| am|'ve| have)? (?:get|getting|got|gotten|live|living|cope|coping) (?:over|with) it\b"
)
# "it" asked after the indefinite it stands for, in the same message: "You were supposed to remind me of something on
# Friday. What was it?" points at nothing earlier (the reminder is asked for).
OWN_ANTECEDENT_IT_RE = re.compile(r"\b(?:something|one thing|a thing)\b[^?]*?\b(?:what|which) (?:was|is) it\b")
# Existential "there" points at nothing: "is there anything in your memory about ...?", "there's a problem".
EXISTENTIAL_THERE_RE = re.compile(
    r"\b(?:is|are|was|were|isn't|aren't) there\b|\bthere(?:'s| is| are| was| were)\b|"
    r"\b(?:hi|hey|hello|hiya|heya|thanks|thank you) there\b"  # the greeting's "there" points at the listener
)
# A bare answer picks one of options offered, or gives a time, and says nothing else: "the first, at 6pm", "option 2",
# "B", "7.30". With no earlier turn there was no question to answer.
PICK_WORDS = frozenset(
    # "both, please": both of the options offered.
    "first second third fourth fifth sixth last latter former other option options choice number plan either both"
    .split())
# An answer saying which time suits, with no question before it: "10:15 works", "Tuesday's better than Wednesday"
# (not "Saturday was fine": a day told).
SUITS_WORDS = frozenset("works work suits suit better best fine easier".split())
TOLD_PAST_WORDS = frozenset("was were went had did".split())
# Said with a hedge or an assurance, an answer is no more than one: "C, definitely.", "Tuesday works better, I think.",
# "About 40, I reckon." (to a question never asked).
HEDGE_WORDS = frozenset(
    "think reckon guess suppose probably definitely maybe perhaps surely certainly absolutely defo deffo def about "
    "around roughly approximately approx ish".split())
# A hedge of more than one word: "About 40, give or take.", "Twelve or so." (as vague an answer as "about 40").
HEDGE_PHRASE_RE = re.compile(r"\b(?:give or take|more or less|or so|or thereabouts|at a guess|to be honest|"
                             r"if i'?m honest|in all honesty|tbh|honestly)\b")
_HEDGE_TAIL = (r"(?:,? (?:please|pls|then|definitely|defo|deffo|probably|maybe|perhaps|for sure|surely|certainly|"
               r"absolutely|i think|i reckon|i guess|i suppose))*")
LETTER_PICK_RE = re.compile(
    rf"^(?:(?:option|answer|choice|plan|number) )?[a-f][.!)]?{_HEDGE_TAIL}[.!]*$")
# A clock time as said: "half four", "quarter to nine", "ten past 6" (half past four, in Britain).
SAID_CLOCK = (r"(?:half(?: past)?|(?:a )?quarter (?:past|to)|(?:five|ten|twenty|twenty-five|twenty five) (?:past|to)) "
              r"(?:[1-9]|1[0-2]|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)(?:\s*(?:am|pm))?")
SAID_CLOCK_RE = re.compile(rf"\b{SAID_CLOCK}\b")
CLOCK_ALONE_RE = re.compile(
    r"^(?:[01]?\d|2[0-3])[.:][0-5]\d(?:\s*(?:am|pm))?[.!]*$|"
    # Or as said, alone, with its hour or without it: "Quarter past.", "ten to, I think" (past what?).
    rf"^(?:(?:at|about|around) )?(?:{SAID_CLOCK}|(?:half past|(?:a )?quarter (?:past|to)|(?:five|ten|twenty|"
    rf"twenty-five|twenty five) (?:past|to))(?: the hour)?{_HEDGE_TAIL})[.!]*$"
)
# A count said in words, guessed at as an answer: "About forty, give or take." (as "About 40").
NUMBER_WORDS = frozenset(
    "six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty "
    "thirty forty fifty sixty seventy eighty ninety hundred thousand dozen couple few".split())
# Answers to a question never asked, beyond their bare pieces (read only with no earlier turn): assent to an offer
# never made ("Yeah go on then.", "yes please, go ahead"; not "ok then", "sure thing": mere receipt), a condition put on
# nothing ("Only if it's not too expensive.", "As long as it's before lunch."), and the day or time that suits given
# with its reason ("Thursday suits me better, Friday is my gym night"; not with a request after it, nor a habit said of
# oneself: "mornings work best for me").
UNASKED_ANSWER_RE = re.compile(
    r"^(?:(?:yes|yeah|yep|yup|ok|okay|sure|alright|right|aye|oh|well|fine)[,!.]* )*"
    r"(?:go on|go ahead|go for it|please do|yes please|crack on)"
    r"(?:[,!.]* (?:then|please|pls|mate|love|thanks|go on|go ahead|do it|i guess|i suppose))*\W*$|"
    r"^(?:(?:but|and|yes|yeah|ok|okay|sure|fine|alright)[,!.]* )*(?:only if|only when|as long as|so long as|"
    r"provided(?: that)?|providing(?: that)?|unless|but not if|not unless)\b[^,;:.?!]*[.!]*$|"
    r"^(?:(?:the )?(?:mon|tues|wednes|thurs|fri|satur|sun)day|tomorrow|the (?:morning|afternoon|evening|weekend)|"
    rf"next week|(?:[01]?\d|2[0-3])(?:[.:][0-5]\d)?\s*(?:am|pm)?|{SAID_CLOCK})"
    r"(?:(?: would)? (?:works?|suits?|work|suit)(?: me| us)?(?: (?:better|best))?|(?:'s| is| would be) (?:better|best|"
    r"easier))(?: for (?:me|us))?(?:\s*[,;\u2013\u2014-]+\s*|\s+(?:as|because|since|cos|coz|cause)\s+)"
    r"(?![^?]*\b(?:(?:can|could|would|will) (?:you|u)|please|pls|remind|set|add|put|move|book|change|switch)\b)"
    r"[^?]*$|"
    # A pick set against another, and nothing else: "The blue folder, not the red.", "oat milk not the normal stuff"
    # (which of what?).
    r"^(?:(?:the|my|our|a|an) )?(?:[a-z0-9'-]+ ){0,2}[a-z0-9'-]+,? (?:not|rather than|instead of|but not) "
    r"(?:(?:the|my|our|a|an|that|this|those|these) )?(?:[a-z0-9'-]+ ?){1,3}"
    r"(?:,? (?:please|pls|thanks|thx|mind|obviously|though))?[.!]*$|"
    # A pick alone, by the look, size or place that tells it from the others: "The green folder.", "the bigger box
    # please", "The top drawer." (which of what?).
    # With assent before it too: "Yes please, the bigger size.", "ok, the blue one".
    r"^(?:(?:um|erm|uh|oh|hmm|ok|okay|yes|yeah|yep|yup|aye|no|nah)(?: (?:please|pls|thanks|then))?[,.!]* )?"
    r"(?:the|that|this) (?:(?:really|very|slightly|dark|light) )?"
    r"(?:red|blue|green|yellow|black|white|grey|gray|brown|pink|purple|orange|silver|gold|navy|beige|big|bigger|small|"
    r"smaller|large|larger|little|tall|taller|short|shorter|long|longer|left|right|top|bottom|front|middle|upper|lower|"
    r"cheaper|dearer|newer|older|second|third) [a-z'-]+(?:,? (?:please|pls|thanks|thx|i think|probably))?[.!]*$|"
    # A pick among options never offered, with a condition on it: "Both, but only the cheap one if they're out.",
    # "Either, as long as it's not raining", "neither tbh, unless the price drops".
    r"^(?:both|either|neither|whichever|all|none)(?: of (?:them|those|these|em|'em))?"
    r"(?: (?:tbh|really|i think|i guess|honestly))?[,.!;\u2013\u2014-]*\s+(?:(?:but|and|yes|yeah) )?(?:only |just )?"
    r"(?:if|when|unless|as long as|so long as|provided|providing|not if|the [a-z]+ one|the [a-z]+ ones)\b[^?]*$|"
    # Or none of them, with nothing after but a hedge: "Neither, to be honest.", "none of those tbh" (not "me neither",
    # agreeing; nor "neither do I").
    r"^(?:neither|none)(?: of (?:them|those|these|em|'em))?(?:[,.!]* (?:tbh|really|honestly|to be honest|"
    r"if i'?m honest|i think|i guess|i'?m afraid|sorry|thanks|please))*[.!]*$"
)
# How far a thing is moved names no thing: "bump it forward two days" still says nothing of what "it" is.
SHIFT_WORDS = frozenset(
    "back forward forwards earlier later up down round around along over ahead behind hour hours day days week weeks "
    "minute minutes mins fortnight month months one two three four five half".split()
)
THING_PRONOUNS = frozenset("it this that these those them there one".split())
# "Quick one: ..." announces a request, it points at nothing; nor does "one" counting what a request asks for ("tell me
# one fact about owls", "give me one idea": not "the blue one", "give me one too").
QUICK_ONE_RE = re.compile(r"\bquick one\b|\b(?:tell|give|name|suggest|share|write|recommend|propose|pick|say|teach|"
                          r"send|show)(?: (?:me|us))? (?:just )?one (?!(?:of|for|too|more|please|pls|now|again|as|and|"
                          r"or|with|from|that|this|then|here|there|also|instead|like|if|when|so|but|yet|thing)\b)"
                          r"[a-z]{3,}")
PERSON_PRONOUNS = frozenset("her him she he they them his hers".split())
THAT_CLAUSE_RE = re.compile(r"\bthat (?:i|my|the|a|an|we|our|you|your|he|she|it's|there|this|his|her)\b")
# After a verb that acts on something, "that" is the thing acted on, not a conjunction: "make that a goal".
OBJECT_THAT_RE = re.compile(r"\b(?:make|turn|mark|track|save|store|keep|log|record|add|put|set|move|schedule) that\b")
CONTEXT_DEPENDENT_RE = re.compile(
    r"^(?:(?:and|but|so|ok|okay|yes|yeah|yep|no|right),? )*(?:tell me more|more|go on|continue|keep going|and then|"
    r"then what|why|why not|how so|what else|what about (?:it|that|this|them|him|her|the other one)|"
    # A question word with nothing to ask about: "how long?", "what about the price", "when?".
    r"how (?:long|much|many|often|far|come)|when|where|who|which|what time|what for|"
    r"what about (?:the |your |my )?[a-z'-]+|the other one|"
    r"(?:do )?(?:the )?same (?:thing|again|as before|as last time)|(?:do it )?like (?:last time|before)|"
    # "same as Dave's", "like Mia's": Dave's what?
    r"(?:(?:the|just) )?(?:same (?:as|like)|like) [a-z'-]+'s|"
    r"again|which one|what do you mean|elaborate|"
    r"explain (?:that|it|more)|the first one|the second one|that one|this one|"
    # More of something never named: "Add two more", "a couple more please".
    r"(?:(?:add|put|get|make|grab|buy|order|book|bring) )?"
    r"(?:\d{1,2}|one|two|three|four|five|six|a few|a couple(?: of)?|some|one or two) more|"
    # A correction of something never said: "no, the other way round", "vice versa".
    r"(?:(?:the|it'?s|its) )?(?:other|wrong) way (?:round|around)|vice versa)(?: too| as well| also)?"
    r"(?:,? (?:please|pls|thanks))?\W*$"
)
HABITUAL_RE = prefiltered(
    r"\b(?:the|my|our) (?:usual|usuals|regulars|staples)\b|"
    # Or as one before it, never said here: "the same time as last Friday", "the same slot as the last one".
    r"\bsame (?:[a-z]+ )?as (?:always|usual|before|yesterday(?:'s)?|last (?:time|week|month|year|night|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)(?:'s)?|the (?:last|previous|other) (?:one|time))(?!\w)|"
    r"\bsame again\b|"  # "Same again for next month please": the same as what?
    # "ok now the same for the evening rota": the same as what was done before (not "it's the same for everyone").
    r"^(?:(?:ok|okay|now|and|so|right|then|great|cool|thanks|perfect)[ ,!.]+)*(?:do |now )?(?:the )?same "
    r"(?:for|with|on)\b(?! (?:me|us|you|everyone|everybody|all)\b)|"  # "same for me" agrees
    r"\blike (?:always|last time|before)\b|"
    # Made like ones done before, never shown here: "make my reminders like the ones you set for Dad", "set it up the
    # way you did for my sister".
    r"(?<!\bi )(?<!\bwe )(?<!\bthey )(?<!\breally )\b(?:like|as|same as) (?:the )?(?:one|ones|way|kind) (?:that )?"
    r"(?:you|u|i|we) (?:set|made|did|wrote|gave|added|"
    r"created|put|sent|scheduled|set up|had|used)\b|"
    r"\bthe (?:same )?way (?:you|u) (?:did|set|made|had)(?: (?:it|them|those|that))? (?:for|with)\b"
)
# "The usual" said as an aside closing a statement tells how things go, it points at nothing to act on: "Stuck in
# traffic on the ring road again, the usual." (``references.py`` reads it so only when no command or question asks).
USUAL_ASIDE_RE = re.compile(r"\s*[,;\u2013\u2014-]\s*(?:just )?(?:the usual|same as (?:usual|always))\W*$")
PERSON_CUE_RE = re.compile(rf"\b(?:she|her|he|him|{'|'.join(sorted(PEOPLE_WORDS))})\b")
# A capitalised word inside a sentence names someone, unless it is a day or a month ("Put him down for Saturday"
# names nobody him could be).
CAPITALISED_RE = re.compile(
    r"(?<=[a-z,] )(?!(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?\b|(?:January|February|March|April|May|June|July|"
    r"August|September|October|November|December)\b)[A-Z][a-z]+"
)
# "Instead" offers an alternative to something said before: "what about tomorrow instead?".
INSTEAD_RE = prefiltered(r"\binstead\b(?! of)")
# A command's object named by its kind alone, with nothing after it but where it goes: "Add the ingredients to my
# shopping list", "Put the dates in" (which ingredients, which dates?). Not "add the dates of the trip: ..." nor
# "the ingredients for lasagne" (they are named).
KIND_ALONE_RE = prefiltered(
    r"\bthe (?:ingredients|dates|details|numbers|names|times|figures|changes|results|items|bits|steps|prices|amounts|"
    r"addresses|measurements|totals|scores|specs|codes|answers|corrections|edits|fixes|bits and pieces|info|photos|"
    r"pictures|pics|files|documents|docs|links|slides|stuff|things)\b"
    # Where they come from names them no better: "put the numbers from my payslip into the budget"; nor what they are
    # for or of, pointed at and never said: "add the ingredients for that recipe to my list", "the parts of this bike".
    r"(?: (?:from (?:my|our|the|this|that|his|her|their)|(?:for|of) (?:this|that|these|those)) [a-z'-]+(?: [a-z'-]+)?"
    r"(?= (?:to|in|into|on|onto)\b))?"
    r"(?=(?: (?:in|up|down|back|out))?(?:,? (?:please|pls|thanks|thx))?\W*$|"
    r" (?:to|in|into|on|onto) (?:(?:my|our|the|this|that|a)\b[^.?!:]*|[a-z'-]+)[.!]*\s*$)|"
    # Or by what they are for: "add the stuff we need for the party to my list" (which stuff?).
    r"\b(?:the|all the) (?:stuff|things|bits|items|supplies|food) (?:that )?(?:we|i) (?:need|needed|want|use|"
    r"usually (?:get|buy)|always (?:get|buy))\b(?: for (?:the |my |our |a |this |next )?[a-z'-]+)?|"
    # Or a list made from a paper or a file the message does not carry: "make a list from the recipe below".
    rf"{MADE_FROM_UNSEEN}|"
    # A thing not named at all: "sort out the thing for the shop", "add the whatsit to my list" (not "the thing is").
    r"\bthe (?:thing|thingy|whatsit|whatsitsname|thingamajig|thingamabob|doodah|doohickey|whatchamacallit)\b"
    r"(?! (?:is|was|about|that|i|we|you|with|called)\b)(?!')"
)
