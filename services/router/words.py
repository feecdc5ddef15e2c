"""Lexicons of what a message asks for: the skills' words, requests, placeholders.

Compiled once at import (pure data, no I/O). ``services/router/signals.py`` turns them into signals; times live in
``services/router/time_words.py``, distress and reassurance in ``services/router/mood_words.py``, writing tasks and
advice in ``services/router/answer_words.py``, lists and where a command opens in ``services/router/list_words.py``.
"""

from __future__ import annotations

import re

from services.router.ascii_twin import twinned
from services.router.form_words import PLEASE_ABROAD, THANKS_ABROAD
from services.router.list_words import (
    CLAUSE_START,
    LIST_CREATE,
    LIST_FIRST,
    LIST_ITEMS,
    LIST_PLEASE,
    MANAGE_AT_CLAUSE,
    NAME_CHAR,
    NAMED_LIST,
    STORED,
    WHOLE_LIST,
)
from services.router.prefilter import prefiltered
from services.router.time_words import TIME_RE
from services.text import GRANDPARENT, NEAREST, OWNER_NAME, any_of

WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

# "remind me what grandma's address is" asks about the person's own world, like "my". Where a clause is read for whose
# it is (REMIND_EXPLAIN_RE), a family word counts with or without its "'s", the boss only as "boss's".
_FAMILY = any_of(NEAREST, GRANDPARENT)
_KIN = f"{_FAMILY}|boss"
_KIN_SAID = f"{_FAMILY}|boss's"
# "Remind me please, what is my landlord called?": a question about what was told, not a reminder to set (the router's
# recall words and the ACT fast path both read it).
REMIND_ASKS = r"\bremind me,?(?: (?:please|pls|again|quickly))?(?:,? |\s*[-–—:]+\s*)(?:what|who|where|which)\b"
REMIND_ASKS_RE = re.compile(REMIND_ASKS)

# The person as a whole, not one topic of theirs: "what have you learned about my habits?" is introspection,
# "what do you know about my allergies?" recalls one thing.
_SELF = (r"my (?:routines?|habits?|preferences|patterns?|interests|personality|tastes?|likes|dislikes|character|"
         r"values|lifestyle|moods?)")

SKILL_PATTERNS = {
    "remind": r"\bremind(?:er|ers)?\b|\br(?:e|i)?m(?:i|e)?n?d me\b|\b(?:an? )?(?:alarm|timer) (?:for|at)\b|"
    r"\bmind reminding me\b|\b(?:need|needs|want|could do with|could use) (?:a )?(?:bit of |little )?reminding\b|"
    r"\bset (?:an? |my )?(?:alarm|timer)\b|\bwake me\b|"
    r"\bdon'?t let me forget\b|\bmake sure (?:that )?i (?:don'?t|do not|never) forget\b|\bmake sure i remember to\b|"
    # A time right after "let me know" / "tell me" asks to be told then: "tell me at 7 tomorrow to leave".
    # Called on in other words too: "shout me at half six to ...", "bell me tomorrow at 9 to ...".
    r"\b(?:let me know|tell me|text me|message me|call me|shout me|bell me|ring me|phone me|holler (?:at )?me) "
    r"(?:at|in|on|by|tomorrow|tonight|this|next|every)\b"
    r"[^.?!]{0,40}?\bto\b|"
    r"\b(?:ping(?:ing)?|nudg(?:e|ing)|alert(?:ing)?|buzz(?:ing)?|prompt(?:ing)?) me\b|"
    # The nudge asked for as a thing: "send me a nudge every weekday at ten to eight to ...".
    r"\b(?:send|give|drop|shoot) (?:me|us) an? (?:quick |little |gentle )?(?:nudge|ping|prompt|buzz)\b|"
    # Called on at a time: "give me a shout at half four to move the car", "give us a bell in 20 minutes".
    r"\b(?:give|send) (?:me|us) an? (?:quick )?(?:shout|bell|holler|yell|heads[- ]up|knock)"
    r"(?= (?:at|in (?!case\b)|tomorrow|tonight|this|next|every|first thing)\b)",
    "schedule": r"\b(?:re)?schedul\w*|\bcalendar\b|"
    r"\b(?:put|add|pop|stick|pencil|write)\b[^.?!]{0,60}\b(?:in|into|on|to) (?:my|the|our) (?:diary|agenda)\b|"
    r"\bbook (?:me |us )?(?:in )?(?:a|an|the|my) (?:[a-z'-]+ )?(?:meeting|call|appointment|slot|session)\b|"
    r"\bset up (?:a|an) (?:meeting|call)\b|\bblock (?:out|off)\b|"
    # One's own agenda: "what have I got on this week?", "am I free on Friday?".
    r"\bwhat (?:do|have) (?:i|we) (?:got|have)(?: on| planned| booked| scheduled)\b|"
    r"\bwhat have (?:i|we) got (?:on|planned|booked)\b|\b(?:am i|are we) (?:free|busy|booked)\b(?! to\b)",
    "list": r"\b(?:add(?:ing|ed)?|ad|put(?:ting)?|pop(?:ping)?|chuck(?:ing)?|throw(?:ing)?|stick(?:ing)?|bung|jot|"
    r"whack|slap|shove|bang|"
    # Put there in passing: "slip the ice onto the party list", "tuck some batteries on the camping list".
    r"slip(?:ping)?|tuck(?:ing)?|toss(?:ing)?|lob|sneak|squeeze|"
    r"write|"
    r"copy|mark|remov(?:e|ing)|delet(?:e|ing)|tak(?:e|ing)|cross(?:ing)?|tick(?:ing)?|check(?:ing)?|clear(?:ing)?|wip(?:e|ing)|"
    r"scratch(?:ing)?|strik(?:e|ing))\b"
    # A learner's "of" for "from" takes a list of one's own: "Remove the sunscreen of my Chiloé list".
    r"[^.?!]{0,80}?\b(?:to|on|onto|from|off|of(?= (?:my|our) ))\b"
    # "on tomorrow's caretaker list": a list named by its day or owner.
    r"[^.?!]{0,20}?\b(?:my|our|the|this|that|your|another|" + OWNER_NAME + r")\b[^.?!]{0,30}?\b(?:list|groceries|tasks|"
    r"wishlist|"
    r"checklist|shopping(?! (?:centre|center|mall|trip|bags?|cart|trolley|spree|channel)))\b|"  # "to the shopping"
    # Items dropped, swapped, or no longer needed: "drop cake from the party list pls", "swap the eggs for tofu on my
    # shopping list", "no need for the tent on the camping list anymore", "the tent can come off the camping list".
    r"\b(?:drop(?:ping)?|scrap(?:ping)?|ditch(?:ing)?|swap(?:ping)?|replac(?:e|ing)|knock(?:ing)?|scrub(?:bing)?|nix|"
    r"bin|dump(?:ing)?)\b[^.?!]{0,80}?"
    r"\b(?:from|off|on)\b[^.?!]{0,20}?\b(?:my|our|the)\b[^.?!]{0,30}?\blist\b|"
    r"\b(?:no need for|(?:i|we) (?:don't|do not|no longer) need)\b[^.?!]{0,60}?\b(?:on|in) (?:my|our|the)\b"
    r"[^.?!]{0,30}?\blist\b|"
    r"\b(?:can|could|should) (?:come|go) off\b[^.?!]{0,20}?\b(?:my|our|the)\b[^.?!]{0,30}?\blist\b|"
    # One thing wanted in place of another on a list said before: "… he wants a gaming mouse, put that instead".
    r"\b(?:doesn't|does not|don't|do not|no longer) wants?\b[^.?!]{0,80}?\bput (?:that|it|this|one)(?: on)? "
    r"instead\b(?! of)|"
    # Terse: "add loo roll 2 shopping list" (not "add an item to a list in Python").
    # "ad" is "add" with a key missed ("ad eggs to shoping list").
    rf"\b(?:add(?:ing)?|ad|put(?:ting)?|pop|chuck|throw|stick)\b[^.?!]{{0,60}}?\b(?:to|2|onto) (?!an? )"
    rf"(?:{NAME_CHAR}+ )?"
    r"(?:list|groceries|to-?dos?)\b|"
    # Terse the other way: "remove headlamp from truck list" (not "remove duplicates from a python list").
    rf"\b(?:remov(?:e|ing)|delet(?:e|ing)|tak(?:e|ing)|cross(?:ing)?|drop|scrap)\b[^.?!]{{0,60}}?\b(?:from|off) "
    rf"(?!(?:an?|python|java|javascript|js|linked|array|sorted|nested|this)\b){NAME_CHAR}+ "
    r"(?:list|to-?dos?)\b(?! in\b)|"
    # The shopping named alone, at the end: "pls add bin bags n oat milk to shopping".
    # Or the shop itself: "stick bin bags on the big shop", "pop teabags onto the weekly shop".
    r"\b(?:add|ad|put|pop|chuck|stick)\b[^.?!]{0,60}?\b(?:(?:to|2|onto) shopping|(?:to|2|on|onto) (?:the|my|our) "
    r"(?:big |weekly |food |main )?shop(?:ping)?)[.!]*\s*$|"
    # A list's name as typed, accents and all: "my Chiloé list", "our Tromsø list".
    rf"\b(?:my|our) (?:(?:[^\W\d_]|['-])+ ){{0,2}}(?:list|lists|to-?dos?|to do list|wishlist|checklist)\b(?! of)|"
    rf"{LIST_CREATE}|"
    rf"{LIST_ITEMS}|{LIST_PLEASE}|{LIST_FIRST}|"
    # Reading lists back: "which lists have I got?", "read out the to-do list".
    r"^(?:what|which) lists\b|\bhow many lists (?:do|have) i\b|"
    # "wat we got on the list for the beach so far", "what have I put on the shopping list", "… on Oisín's party list"
    # (not "the list of …").
    r"\b(?:what|wat|wot)(?:'?s| is| are)?(?: (?:do|have|did) (?:i|we)| (?:i|we))?(?: (?:got|have|put|added))?"
    rf"(?:(?: still)? (?:left|remaining))? (?:on|in) (?:the|{OWNER_NAME}) (?:{NAME_CHAR}+ ){{0,2}}list\b(?! of)|"
    rf"\b(?:read|show|tell|give)(?: me)?(?: out)? (?:my|our|the) (?:{NAME_CHAR}+ ){{0,2}}"
    r"(?:list|to-?do list|to-?dos?)\b"
    r"(?! of)|"
    # "what's on the packing list again?": a list named with "the" is still the person's.
    # As typed and as learners ask it: "wots on my tools list", "What I have on my garden list?", "what is on cottage
    # list?" (a name of its own is needed without "the").
    r"^(?:what'?s|whats|wots|wats|what is|what are|what do i have|what have i got|what i have|anything|"
    rf"is there anything|how many \w+ are) (?:on|in) (?:the (?:{NAME_CHAR}+ ){{0,2}}|(?!(?:a|an|this|that|your) )"
    rf"(?:{NAME_CHAR}{{3,}} ){{1,2}})(?:list|to-?do list|to-?dos?)\b",
    "remember": rf"{CLAUSE_START}(?:remember(?:ing)?|"
    r"remeber|rember|remembr|remmeber|memori[sz](?:e|ing)|not(?:e|ing) down|"
    r"keep(?:ing)? in mind|keep(?:ing)? on (?:record|file)|put on (?:record|file)|"
    r"don'?t forget|mak(?:e|ing) a note|mak(?:e|ing) (?:a )?mental note|jot(?:ting)? down|"
    r"writ(?:e|ing) down|"
    r"sav(?:e|ing))\b(?! (?:when|how|what|if|the time))|"
    r"\b(?:remember|note|memori[sz]e|save) (?:that|this)\b|\bfor future reference\b|"
    # Into the notes kept for the person: "add to my notes that the van comes on Wednesdays".
    r"\b(?:add|put|pop|stick|jot|write)\b[^.?!]{0,60}?\b(?:to|in|into|onto) (?:my|your|the) (?:notes|memory)\b|"
    r"\b(?:you|u) (?:noted|remembered|saved|stored|kept) (?:that|this)\b|"  # "I'd appreciate it if you noted that"
    # Storing a given piece of information: "please store this: ...", "log that ...", "put this in your memory".
    # (not "keep it away from me", "keep it short": kept somewhere or somehow, not stored)
    rf"{CLAUSE_START}(?!keep(?:ing)? (?:this|that|these|it) (?:away|out|off|from|clear|down|up|going|coming|short|"
    r"simple|brief|quiet|clean|warm|cold|light|real|together|low|tidy|moving|to yourself)\b)"
    r"(?:stor(?:e|ing)|log(?:ging)?|record(?:ing)?|fil(?:e|ing)(?: away)?|keep(?:ing)?)\b "
    r"(?:this|that|these|it|the following|my|a note|a record|the (?:fact|info|information|detail)s? that)\b|"
    rf"{CLAUSE_START}(?:stor(?:e|ing)|sav(?:e|ing)|keep(?:ing)?|log(?:ging)?|record(?:ing)?|note(?: down)?|jot down|"
    r"write down|(?:hang|hold) on ?to|keep hold of)\b (?:the|my|our) "
    r"[^.?!]{1,40}?(?:\bis\b|\bit'?s\b|:)|"
    # A detail asked to be kept by its kind, given in the next sentence: "Can you keep the plumber's number? It's ...".
    r"\b(?:keep(?:ing)?|stor(?:e|ing)|(?:hang|hold) on ?to|keep hold of) (?:the |my |our )?"
    r"(?:[a-z'-]+ ){0,3}?(?:number|line|landline|mobile|code|pin|password|address|postcode|email|extension|"
    r"reference|details)(?: for (?:me|us|later))?[?.!]+\s*(?:it'?s|it is|that'?s|that is)\b|"
    # A storing verb straight before a colon hands over its payload: "please store: the spare key is at no. 12"
    # (a statement: "Note: I'm asking for a friend. How do I ...?" is a question with a remark before it), also in the
    # languages whose politeness REQUEST_RE reads ("bitte merken: ...", "apunta: ...").
    rf"{CLAUSE_START}(?:stor(?:e|ing)|sav(?:e|ing)|remember|note(?: down)?|log|record|keep|memori[sz]e|bookmark|"
    r"(?:put|stick) a pin in|archive|park|make sure (?:you|u) (?:remember|note|save|store|keep)|"
    r"(?:merken|merk dir|notieren|speichern|apunta|anota|guarda|recuerda|notez|retiens|enregistre)"
    r"(?: (?:esto|eso|das|dies|ça|cela))?)(?: (?:it|this|that|these))?(?: for (?:me|us|later))?(?:,? (?:please|pls))?"
    r"\s*:(?:\s*[^?\s][^?]*)?\s*$|"  # with nothing after the colon it names nothing to store ("store:")
    r"\b(?:something|this|one) (?:to|for you to) (?:keep|remember|store|save|note)\b|"
    r"\b(?:(?:hang|hold) on ?to|keep hold of) (?:this|that|it|these|the following|"
    r"the (?:fact|info|information|detail|news)s? that)(?: one| ones| two| three| four| few| bits?| lot)?\b|"
    r"\bmake a record\b|\b(?:jot|write|note|put|take) (?:it|this|that|these)(?: one| ones| two| three| bits?| lot)? "
    r"down\b|"
    # Put away for later with what it is: "squirrel this away for me: ...", "tuck that away - the code is 4471".
    rf"{CLAUSE_START}(?:squirrel|stash|tuck|stow|salt|lock|file|store|save)(?: (?:it|this|that|these)"
    r"(?: one| ones| two| bits?)?)?"
    r" away(?: for (?:me|us|later|safekeeping))?(?:,? (?:please|pls))?\s*(?::|[-\u2013\u2014]|,? that\b)|"
    # Kept on record or on file, what it is after a colon or "that": "put it on record that I lent Callum the saw",
    # "please keep in your records that ...", "add to your files: ..." (not "for the record, I never said that").
    rf"{CLAUSE_START}(?:put|keep|have|get|place|add|log|note|enter|pop|stick)(?: (?:it|this|that|these)(?: one)?)?"
    r"(?: down)? (?:on|in|into|to) (?:the |your |my )?(?:records?|files?)(?:,? (?:please|pls|for (?:me|us)))*"
    r"\s*(?::|[-\u2013\u2014]|,? that\b)|"
    # Filed under a heading, what it is after a colon: "file under Grandpa: no grapefruit ever".
    rf"{CLAUSE_START}(?:file|log|save|store|keep|note|put)(?: (?:it|this|that|these))?(?: away)? under "
    r"[^.?!:\n]{1,30}:\s*[^\s?]|"
    r"^(?:note|memo|fyi)(?: to (?:self|myself)| for (?:later|the future|future reference|next time))?\s*:[^?]*$|"
    r"\b(?:save|store|keep|make|take|add) (?:a |this )?(?:note|memo)\s*:|"
    r"\bi (?:want|need|would like) to (?:store|note down|record|log|save (?:a note|this|that|the following|something|"
    r"some info))\b|\bi'?d like to (?:store|note down|record|log|save (?:a note|this|that|the following|something))\b|"
    r"\b(?:put|add|keep|store|save|commit|stick|pop|file|lodge|tuck|stow|stash|bank|lock|squirrel|park|log|note|"
    r"write|bung)\b[^.?!]{0,20}? (?:in|to|into) (?:your )?(?:memory|brain|memory bank)\b|"
    r"\b(?:i'?d like|i want|i need|i would like) you to (?:store|remember|save|keep|note|record|log|memori[sz]e)\b",
    "recall": r"\bdo you (?:still )?(?:remember|recall|know) (?:what|when|where|who|my|if|whether|the|our)\b|"
    r"\bdo you (?:still )?(?:remember|recall) about\b|\bdo you (?:still )?(?:know about|have) (?:my|our|me)\b|"
    r"\bwhat did (?:i|we) (?:tell|say|mention|ask|share|talk|discuss|decide)\b|"
    r"\b(?:did|didn'?t|have|haven'?t) i (?:ever |already )?(?:tell|told|mention|mentioned|say|said)\b|"
    r"^(?:what|when|where|who|which)(?:'s| is| was| are| were| did)? (?:my|our)\b|"
    # "remind me what my …", and with a word between: "Remind me please, what is the name of my doctor now?",
    # "remind me again, who is my dentist?" (a question about what was told, not a reminder to set).
    rf"{REMIND_ASKS}(?=[^.!?]*\b(?:i|we|my|our)\b)"
    r"(?![^.!?]*\b(?:at \d|tomorrow|tonight|in an? hour|in \d+ (?:min|hour)))|"  # a time: a reminder to set
    rf"\bremind me (?:what|who|where|when)\b(?=.*\b(?:{_KIN})'s\b)|"
    r"^(?:what|when|where|who|which)\b[^?]{0,60}\b(?:my|our)\b[^?]{0,40}\bagain\W*$|"
    r"\bwhat do you (?:remember|recall)\b|\bwhat (?:do )?(?:you|u) (?:remember|recall|know|have(?: stored| saved)?) "
    r"(?:about|abt|on|of) (?:my|our)\b|^(?:what|which|where|who|when)\b[^?]{0,60}\b(?:i|we) (?:liked|loved|hated|"
    r"recommended|visited|went to|ate at|stayed at|bought|used|gave you|sent you|showed you)\b|"
    r"\blast time (?:we|i) (?:talked|spoke|chatted)\b|"
    r"\bi (?:told|mentioned|said to) you\b|\b(?:have|did) i (?:set|add|save|schedule|ask you)\b|"
    # What was told, named by its topic: "look up what I said about the boiler", "the plumber I mentioned".
    r"\b(?:what|everything|anything|the things?) (?:i|we)(?:'ve| have)? (?:said|told you|mentioned|shared|wrote)"
    r"(?: to you)? about\b|"
    r"^(?:what(?:'?s)?|which|where|who|when)\b[^?]{0,60}\b(?:i|we) (?:mentioned|told you about|talked about|brought up|"
    r"said)\b|"
    # Asking what the assistant holds: "anything in your memory about my passport?", "do you have anything on file".
    r"\b(?:anything|something|what'?s|whats|what is|what do you have|do you have|have you got)\b[^.?!]{0,30}?"
    r"\b(?:in|on) (?:your )?(?:memory|memories|file|records?)\b|"
    # Searching what was told: "search my memories for anything about the boiler".
    r"\b(?:search|look (?:through|in|up)|check|dig (?:through|in)|go through|scan)\b[^.?!]{0,20}?"
    r"\b(?:my|your|the) memor(?:y|ies)\b",
    "introspect": rf"\bwhat (?:else )?(?:do )?you know about (?:me|myself|{_SELF})\b|\bwhat have you (?:learned|learnt|"
    r"figured out|noticed) about (?:me|my)\b|\bhow well do you (?:[a-z]+ )?know me\b|\bwhat do you remember about me\b|"
    r"\btell me about myself\b|\bwhat (?:you(?:'ve| have)?|do you|have you|do u|u) (?:know|learned|learnt|noticed|"
    rf"picked up|worked out|figured out|gathered|found out)(?: so far)? (?:about|abt) (?:me|myself|{_SELF})\b|"
    r"\bwhich of my (?:preferences|interests|habits|routines)\b|"
    r"\bwhat (?:do you have|have you got)(?: on file| stored| saved| on record)? (?:about|on) me\b|"
    r"\bwhat are my (?:preferences|interests|habits|patterns)\b|\bwhat do you think (?:you know )?about me\b|"
    # What the assistant holds about the person as a whole: "tell me everything you've stored about me".
    r"\b(?:you|u)(?:'ve| have| had| do| did)?(?: (?:still|already|actually|really|got|have|ever))* (?:know|knew|stored|"
    r"saved|kept|recorded|noted|remember(?:ed)?|learned|learnt|gathered|collected|have|keep|hold|store|save|got)"
    r"(?: (?:so far|by now|until now|stored|saved|on file))? (?:about|abt|on|of) (?:me|myself)\b",
    "goal": rf"\b(?:my|new|set an?|set my) (?:{NAME_CHAR}+ ){{0,2}}(?:goal|goals|resolution|resolutions)\b|"
    # Setting or tracking one goal: "set me a goal to ...", "record a goal: ...", "track my progress on ...".
    r"\b(?:set(?:ting)?(?: up)?|add(?:ing)?|record(?:ing)?|creat(?:e|ing)|mak(?:e|ing)|start(?:ing)?|track(?:ing)?|"
    r"log(?:ging)?|open(?:ing)?|"
    # Or followed, watched or entered with what it is: "Please follow this goal of mine: ...", "monitor this goal".
    r"follow(?:ing)?|monitor(?:ing)?|watch(?:ing)?|register(?:ing)?|enter(?:ing)?|sav(?:e|ing)|stor(?:e|ing)|"
    r"keep(?:ing)? (?:track of|tabs on|an eye on))(?: me| myself| for me)? (?:a|an|another|my|this|that) "
    rf"(?:new )?(?:{NAME_CHAR}+ ){{0,2}}?(?:goal|target|objective)\b|"
    # A learner's goal with no article: "please you make goal for me, I want learn 300 kanji".
    r"\b(?:set|make|creat(?:e|ing)|add|start)(?: (?:me|us))?(?: new)? goal\b(?= (?:for|to)\b|\s*[:,-])|"
    # Put in with what it is: "Put a goal in for me: walk the dogs before every shift", "put a savings goal in for me:
    # ...", "pop this goal on for me, no sweets in Lent".
    rf"\b(?:put|pop|stick|pencil)(?: in| down| on)? (?:a|an|another|this) (?:new )?(?:{NAME_CHAR}+ )?(?:goal|target)\b"
    r"(?=(?: in| down| on)?(?: for (?:me|myself|us))?\s*(?::|-|,|to\b))|"
    # An aim stated, then handed over to be tracked: "I want to hit 10,000 steps a day, can you track that?".
    r"\bi(?: (?:want|need|plan|aim|hope|intend)|'d like|(?:'m|am) (?:going|aiming|hoping|planning)|would like) to "
    r"[^.?!]{3,80}?[,.;!\u2013\u2014-]\s*(?:(?:can|could|will|would) (?:you|u) |please |pls )?"
    r"(?:track|keep (?:track of|tabs on|an eye on)|log|monitor|hold me to|(?=follow (?:my|the) progress)follow)"
    # Or its progress followed: "I want to read 20 books this year — please follow my progress on that goal".
    r"(?: (?:my|the) progress (?:on|of|with|towards?))? "
    r"(?:that|it|this)\b|\bgoal(?: for [^.?!:]{1,30}| now| then| too| as well)?\s*:|"
    # A goal's heading, a dash and what it is: "Goal - lose 5 kilos before the wedding".
    r"^(?:(?:new|my) )?goal\s+[-\u2013\u2014]\s+[^\W\d_]|(?:^|[,.;!-]\s*)goal is\b|"
    # A goal's target given as a field: "Target: 10,000 steps a day", or left empty in a form ("Target:\nDeadline:").
    r"(?:^|\n)target\s*:|"
    # Asked for as a thing, what it is after a dash or a colon: "I'd like a goal please - cycle to work every Friday".
    r"\b(?:i'?d like|i would like|i want|i need|can i have|could i have|can i get|give me) (?:a|an|another) (?:new )?"
    r"(?:goal|target)(?: (?:for me|for myself|please|pls|set up|added|adding))*\s*(?::|-|\u2013|\u2014)\s*[^\W_]|"
    # One's own goal or target stated, then handed over to be tracked: "My target is to read 20 books by June. Please
    # keep track of it." (told alone, with no request, it stays news).
    rf"(?:^|[,.;!-]\s*)(?:my|our) (?:{NAME_CHAR}+ )?(?:goal|target|aim|objective|resolution)"
    r"(?: for [^.?!:,]{1,30}?)? is "
    r"[^.?!]{3,120}?[,.;!-]\s*(?:(?:can|could|will|would) (?:you|u) |please |pls )?(?:track|keep (?:track of|tabs on|"
    r"an eye on)|log|monitor) (?:that|it|this)\b|"
    # A goal for a time stated, then handed over to be tracked: "Goal for this year is to save 2000, please track it".
    r"(?:^|[,.;!-]\s*)goal for [^.?!:,]{1,30}? is [^.?!]{3,80}?[,.;!-]\s*(?:(?:can|could|will|would) (?:you|u) |please "
    r"|pls )?(?:track|keep (?:track of|tabs on|an eye on)|log|monitor) (?:that|it|this)\b|"
    # Keeping something said as a goal: "please track that as a goal", "save it as one of my goals".
    r"\b(?:set|add|record|create|make|start|track|log|keep track of|save|store|turn|count|treat|put|keep|note|file|"
    r"hold)\b[^.?!]{0,40}?"
    # Or of a kind or a rhythm: "turn walking to work into a daily goal".
    r"\b(?:as|into) (?:a|an|my|one of my) (?:(?:new|personal|daily|weekly|monthly|yearly|annual|long-term|fitness|"
    r"savings|health) )?goals?\b|"
    r"\bi (?:want|'d like|would like|need) to (?:keep track of|track)\b|"
    rf"{CLAUSE_START}(?:track|keep track of|log|monitor) (?:my |our )?progress\b|\b(?:how'?s|how is|how am i doing)\b"
    r"[^.?!]{0,40}\bgoals?\b|\bgoal (?:update|progress|check-?in)\b|"
    r"\b(?:turn|make) (?:it|that|this|those)(?: into)? (?:a|an|one of my|my) (?:new )?goals?\b|"
    # Something to do made the goal: "make cycling to work twice a week a goal for me", "make no sweets my target".
    r"\bmake (?!(?:a|an|the|my|it|that|this|those|some|sure|time|progress)\b)[^.?!]{3,60}? (?:a|my|one of my) "
    r"(?:new |personal )?(?:goal|target|resolution)\b|"
    r"\bhold me to (?:it|this|that)\b|"
    r"\bprogress (?:on|toward|towards) my\b|\bhelp me (?:stick to|keep track|track|stay on track)\b|"
    r"\bkeep me on track\b|\b(?:keep|hold) me accountable\b|"
    r"^(?:what|which) goals (?:am i|do i|have i|did i)\b",
    # Removing what the assistant knows: "forget that I live in Paris", "erase what I told you about X".
    # Not "forget it" (never mind), "don't forget" (remember) or "can you forget things?" (a capability question).
    "forget": rf"{CLAUSE_START}(?:(?:forget|unlearn)\b(?! (?:it|about it|things|stuff|anything|something)\b)(?=\W*\w)|"
    r"(?:erase|delete|remove|wipe|clear|purge|drop)\b[^.?!]{0,30}?\b(?:what (?:i|we) (?:just )?"
    r"(?:told|said|mentioned|shared|wrote)|(?:everything|all|anything|what) (?:that )?you (?:know|remember|have "
    r"(?:learned|learnt|stored|saved)|learned|learnt|stored|saved)|from (?:your )?memory)\b|"
    # A stored memory named by what it is about: "delete the note about my old phone number".
    r"(?:erase|delete|remove|wipe|drop|forget)(?: the| that| my| your)? (?:note|memory|fact|entry|record)s? "
    r"(?:about|on|of|that|saying)\b)|\bstop remembering\b|"
    r"\b(?:i )?(?:don'?t|do not) want you to (?:remember|keep|know|store)\b",
    # Changing or removing something already stored: reminders, list items, whole lists, goals.
    "manage": rf"{CLAUSE_START}(?:{MANAGE_AT_CLAUSE})|\blist (?:called|named)\b|"
    r"\b(?:what|which|any|all (?:of )?my|list (?:my|all)|show (?:me )?my) (?:upcoming |active |current |pending )?"
    rf"reminders\b|\bgoals?\b[^.?!]{{0,40}}?{CLAUSE_START}(?:delete|drop|remove|cancel|abandon|archive) "
    r"(?:it|that|this)\b|"
    # A goal named, then marked done in a sentence of its own: "Goal achieved: the clock is restored! Mark it as done."
    r"\bgoals?\b[^?]{0,200}?[.!:]\s*(?:(?:please|pls|now|and|then|just|so|can you|could you) )*"
    r"mark (?:it|that|this)(?: as)? (?:done|complete|completed|achieved|finished|met|reached)\b",
}
SKILL_RES = {name: re.compile(pattern) for name, pattern in SKILL_PATTERNS.items()}
# Not an exclamation: "What a day at the salon. ... remind me about ... at 5".
READ_QUESTION_RE = re.compile(
    r"^(?:what(?! an? [^.!?]*[.!])|which|how|when|where|who)\b|"
    r"^(?:do|does|did|have|has|are|is|am) (?:i|you|u|we|my|it|there|this|that)\b|"
    # A reminder set before, asked about: "You had to remind me something about 18h, what was it?"
    r"^(?:you|u) (?:had to|(?:were|was) (?:supposed|meant|going) to|said (?:you'?d|you would)|promised to|"
    r"should have) remind\b"
)
LIST_WRITE_RE = re.compile(r"\b(?:add|adding|ad|put|putting|pop|chuck|throw|stick|bung|whack|slap|shove|jot|write|copy|"
                           r"slip|slipping|tuck|tucking|toss|tossing|lob|sneak|squeeze|"
                           r"remove|delete|"
                           r"take|cross|mark|"
                           r"tick|check|clear|clearing|wipe|wiping|scratch|strike|"
                           r"create|creating|make|making|start|"
                           r"starting|set up|setting up|set (?:me|us) up|setting (?:me|us) up|open|opening|begin|"
                           r"together|need|want|like|new)\b")
LIST_ITEMS_RE = re.compile(rf"{LIST_ITEMS}|{LIST_PLEASE}")
WHOLE_LIST_RE = re.compile(rf"{CLAUSE_START}{WHOLE_LIST}")
NAMED_LIST_RE = re.compile(rf"\b{NAMED_LIST}")
# Forms that ask the assistant to do something: "can you ...", "please", "I'd like you to", "would it be possible".
REQUEST_RE = twinned(
    # Not news announced: "would you believe it, the lift passed first time", "would you look at that, sunshine".
    r"\b(?:can|could|would|will|won't|wouldn't) (?:you|u)\b(?! (?:believe|credit) (?:it|this)\s*[,.!:;\u2013\u2014-]|"
    r" (?:just )?look at (?:that|this)\s*[,!])|"
    r"\b(?:please|pls|plz|kindly)\b|\byou (?:can|could|may)\b|"
    # "lets gooo" cheers, it asks nothing.
    r"\bi (?:want|need|'d like|would like) you\b|\bmind\b|\bpossible\b|\blet'?s\b(?! go+\b\W*$)|"
    # Asking for the assistant's own view: "I'd appreciate your thoughts on ...", "I humbly request your advice".
    r"\b(?:appreciate|request|want|need|welcome|value|love|like|seek|seeking|ask for|asking for|hear) your (?:honest )?"
    r"(?:thoughts|advice|opinion|input|take|views?|recommendations?|suggestions?|guidance|feedback)\b|"
    # Politeness in other languages asks just as "please" does.
    rf"\b(?:{PLEASE_ABROAD})\b"
)
# A question about stored things picks some out ("any reminders today?", "is the dentist reminder still on?");
# a question about the world names the kind ("are reminders better than alarms?").
STORED_PICKED_RE = re.compile(
    r"\b(?:the|any|which|what|how many|all) (?:[a-z'-]+ ){0,2}?(?:reminders?|alarms?|timers?|appointments?|meetings?|"
    r"events?|lists?|goals?|items?|to-?dos?)\b"
    # a learner's "what is on cottage list?"
    rf"|\b(?:on|in) (?!(?:a|an|this|that|your) )(?:{NAME_CHAR}{{3,}} ){{1,2}}list\b"
)
QUESTION_SENTENCE_RE = prefiltered(r"[^.!?]*\?")
FIRST_PERSON = frozenset("i me my mine we us our ours myself ourselves i'm i've i'd i'll we're we've we'd".split())
# A verb that edits or removes something: with a resolved pronoun it acts on what the last turn stored.
MANAGE_VERB_RE = re.compile(
    r"^(?:mark|cancel|delete|remove|uncheck|untick|tick|cross|forget|erase|snooze|move|push|drop|clear|empty|rename|"
    r"update|change|stop)\b"
)
NO_TASK_NEEDED_RE = twinned(r"\b(?:alarm|timer|wake me)\b")  # waking is the task itself
# "We" is everyone's when it has a kind of thing in general, no one's in particular: "remind me why we have leap years",
# "how we get seasons" (not "why we have to leave at 6", "what we have on tomorrow", "how we get there").
_OWN_WE = (r"we(?! (?:have|need|get|use|call|say|celebrate|see|feel|dream|sleep|yawn|sneeze|blush|age)\b"
           r"(?! (?:to|the|a|an|our|my|your|this|that|these|those|it|them|him|her|some|any|for|on|in|at|with|from|by|"
           r"up|out|off|back|round|over|there|here|home)\b))")
# Only its own clause says whose: "Remind me how git rebase works, I always forget" asks for an explanation.
# "Remind me which bell is the treble", "could you remind me of the difference between a will and ...", "remind me
# where Lesotho is" too.
REMIND_EXPLAIN_RE = prefiltered(
    # After a dash or colon too: "Remind me again — what's the boiling point of water up Everest?"
    rf"\bremind me(?:,? again)?(?:,? |\s*[-–—:]+\s*)(?:what|how|why|who|which|where|(?:of )?the differences? between)\b"
    rf"(?![^,;.!?]*\b(?:i|my|{_OWN_WE}|our|{_KIN_SAID})\b)|"
    # "Remind me again, is it 9 over 5 for Fahrenheit?": a yes-or-no question after it asks the same.
    rf"\bremind me(?:,? again)?(?:, |\s*[-–—:]+\s*)(?:is|are|was|were|does|do|did|can|should|has|have)\b"
    r"(?![^;.!?]*\b(?:i|my|we|our)\b)|"
    # The question first, "remind me" after it as a tag: "Who wrote Dracula, remind me?", "Where is Oban again?
    # Remind me." (not "when": a date of the person's, maybe; not of their own things: "what's my PIN, remind me").
    rf"(?:^|[.!?]\s+)(?:who|what|what's|whats|where|where's|which|why|how|is|are|was|were|does|do|did|should)\b"
    rf"(?:(?!\b(?:i|my|me|we|our|{_KIN_SAID})\b)[^.!?])*?(?:,\s*|\?\s*)remind me(?:,? (?:again|please|pls))*[.!?\s]*$"
)

# A stored thing named by its time says which one it is: "move my 6pm reminder to 7", "cancel tomorrow's meeting".
TIMED_STORED_RE = re.compile(
    rf"{TIME_RE.pattern}(?:'s)? (?:[a-z'-]+ )?{STORED}\b|\b{STORED} (?:for |on |set for )?{TIME_RE.pattern}"
)
# Politeness around a command is not its content: "set a goal, thanks" still names no goal.
POLITE_WORDS = frozenset(
    "thanks thank thx ty cheers merci por favor favour favor bitte danke gracias grazie kindly wondering mind possible "
    "quick kind hey hi hello ok okay sure lovely great cool sec moment ta sorry".split()
)

# Openers before the message proper; "tell you what" / "guess what" / "you know what" announce news, they neither
# command nor ask ("Tell you what, that yoga class was brutal.").
LEAD_IN_RE = re.compile(
    # "Well would you believe it, the lift passed first time": news announced, not a question.
    r"^(?:(?:well|(?:would|could|can) (?:you|u|ya) (?:believe|credit) (?:it|this)(?=\s*[,.!:;\u2013\u2014-])|"
    r"(?:would|will) (?:you|u|ya) (?:just )?look at (?:that|this)(?=\s*[,!])|"
    r"(?:you'?ll|you will) never (?:believe|guess)|"
    # "Excuse me" abroad opens a request as "please" does: "Sumimasen, please move ...", "Perdón, add ...".
    r"sumimasen|perd[oó]n|disculp[ae]|entschuldigung|excusez-moi|scusi|desculp[ae]|"
    rf"please|pls|plz|kindly|{PLEASE_ABROAD}|hey|yo|hiya|wait|ok|okay|so|and|also|now|can you|"
    r"could you|would you|can u|could u|would u|(?:i'?ll )?tell you what|guess what|you know what)[ ,!.]+)+"
)
# Thanks before a new command: "Merci, now do the rest.", "thanks! add eggs too" (not a question: "thanks, will try
# that" leaves out its "I").
THANKS_LEAD_RE = re.compile(rf"^(?:thanks|thank you|thx|ta|cheers|{THANKS_ABROAD})[ ,!.]+")
STOPWORDS = frozenset(
    "a an the and or but if so of to in on at by for with from up about into over after before as is are was were "
    "be been am do does did have has had will would can could should may might must shall i me my mine we us our you "
    "smth sth smthg um umm uh uhm erm er "
    "your he him his she her they them their it its this that these those there here what when where who whom which "
    "why how not no yes just very really too also then than please pls thing things stuff one some any again more "
    "let let's i'm it's that's what's don't can't i'll you're something anything everything someone somewhere".split()
)
CONFIRM_RE = re.compile(r"^(?:yes|yeah|yep|yup|sure|ok(?:ay)?|do it|go ahead|confirm(?:ed)?|please do|no|nope|cancel|"
                         r"don'?t|stop)\b")
