"""Observable signals the mode router scores: small pure functions of the text and the context.

Every function returns a dict of float signals so the router can weigh any of them with a
weight from ``configs/router.toml``. Lexicons are regular expressions compiled once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

MODES = ("RESPOND", "CLARIFY", "ACKNOWLEDGE", "ACT", "IGNORE")

_HEAD_CHARS, _TAIL_CHARS = 400, 200
_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_EMOJI_RE = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\ufe0f\u200d]")
_EMOTICON_RE = re.compile(r"(?<!\w)(?:[:;=8][-'^]?[)(\]\[dDpP/\\|*oO3]+|<3+|(?<!\^)\^_*\^(?!\^)|xD+|XD+)(?!\w)")
_SENTENCE_END_RE = re.compile(r"[.!?]+(?:\s+|$)")

# Letter pairs that occur in at least ten English words of four or more letters (from the
# MiniLM word-piece vocabulary). Keyboard mashing is made mostly of the other pairs.
_COMMON_BIGRAMS = frozenset(
    "aa ab ac ad ae af ag ah ai aj ak al am an ao ap aq ar as at au av aw ax ay az ba bb bd be bi bj bl bo br bs bt bu "
    "by ca cc ce ch ci ck cl co cq cr cs ct cu cy da db dc dd de df dg dh di dj dl dm dn do dr ds dt du dv dw dy ea eb "
    "ec ed ee ef eg eh ei ej ek el em en eo ep eq er es et eu ev ew ex ey ez fa fe ff fi fl fo fr fs ft fu fy ga ge gg "
    "gh gi gl gm gn go gr gs gt gu gy ha hb hd he hi hl hm hn ho hr hs ht hu hw hy ia ib ic id ie if ig ik il im in io "
    "ip iq ir is it iu iv ix iz ja je ji jo ju ka ke kh ki kl kn ko kr ks ku kw ky la lb lc ld le lf lg li lk ll lm ln "
    "lo lp ls lt lu lv ly ma mb mc me mf mi ml mm mn mo mp ms mu my na nb nc nd ne nf ng nh ni nj nk nl nm nn no np nq "
    "nr ns nt nu nv nw ny nz oa ob oc od oe of og oh oi oj ok ol om on oo op or os ot ou ov ow ox oy oz pa pe ph pi pl "
    "pm po pp pr ps pt pu py qu ra rb rc rd re rf rg rh ri rk rl rm rn ro rp rr rs rt ru rv rw ry sa sb sc sd se sf sh "
    "si sk sl sm sn so sp sq sr ss st su sw sy ta tb tc te tf th ti tl tm tn to tp tr ts tt tu tw ty tz ua ub uc ud ue "
    "uf ug ui uk ul um un uo up ur us ut uv ux uz va ve vi vo wa we wh wi wk wl wn wo wr ws wy xa xc xe xh xi xo xp xt "
    "xu ya yb yc yd ye yi yl ym yn yo yp yr ys yt yu za ze zi zo zy zz".split()
)
_KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "poiuytrewq", "lkjhgfdsa", "mnbvcxz")
_NOT_MASH_RE = re.compile(
    r"^(?:h+m+|m+h?m+|s+h+|p+f+t+|p+s+t+|g+r+|b+r+|z+|thx|thnx|nvm|pls|plz|tbh|smh|idk|btw|lmk|brb|ttyl|"
    r"wtf|omg|lol|lmao|rofl|ha(?:ha)+h?|he(?:he)+|hi(?:hi)+|lo(?:lo)+l?|ja(?:ja)+|a+h+|o+h+|u+g+h+|w+o+w+|y+a+y+|x+d+)$"
)
_REPEATED_CHUNK_RE = re.compile(r"(.{1,3})\1{2,}.{0,2}")
_ELONGATION_RE = re.compile(r"(.)\1{2,}")
_KEY_CHUNK_RE = re.compile(r"(.{2,4})\1+")  # "tyutyu": a run of neighbouring keys typed twice

_GREETING_RE = re.compile(
    r"^(?:hi+|hello+|hey+|hiya|heya|yo|howdy|greetings|sup|hallo|good (?:morning|afternoon|evening|day)|"
    r"morning|mornin'?|evening|what'?s up|wass?up|gm)\b"
)
_THANKS_RE = re.compile(
    r"\b(?:thanks?|thank (?:you|u)|thankyou|thx|thnx|ty|cheers|much appreciated|appreciate (?:it|that))\b"
)
_FAREWELL_RE = re.compile(
    r"\b(?:bye+|goodbye|good ?night|night night|nighty|gn|see (?:you|ya)(?: later| tomorrow| soon)?|cya|"
    r"later|ttyl|talk (?:to you )?(?:later|soon|tomorrow)|take care|catch you later|"
    r"have a (?:good|great|nice|lovely) (?:one|day|night|evening|weekend|trip|time))\b"
)
_PHATIC_RE = re.compile(
    r"\b(?:ok(?:ay)?|k+|kk|cool|nice one|nice|great|awesome|amazing|got it|"
    r"sounds (?:good|great|fine|perfect|fun|like a plan)|sure|alright|all right|lol|lmao|"
    r"ha(?:ha)+|he(?:he)+|yep|yeah|yup|yes|no worries|np|wow|oh|ah|hmm+|fine|perfect|noted|understood|"
    r"fair enough|makes sense|true|indeed|exactly|right|oops|omg|how are you(?: doing)?|how'?s it going|"
    r"you'?re (?:the best|awesome|great|amazing|a star)|love (?:it|that|you)|(?:that|this|it)(?:'s| is| was) "
    r"(?:so |really |very |super )?(?:great|nice|cool|funny|awesome|perfect|helpful|useful|hilarious|lovely|good|"
    r"kind|sweet)|that (?:helps|helped|worked)|good (?:to know|job|stuff)|"
    r"well done|no problem|you too|same to you|welcome|wonderful|brilliant|excellent|sweet|neat|gotcha|"
    r"roger|thumbs up|hehe|aww+|yay|phew|whatever|bless you|much better|all good|i'?m (?:good|fine|ok)|will do|"
    r"i'?ll try (?:that|it)|good idea|i see|anyway|ok(?:ey|ie)[- ]dok(?:ey|ie)|and you|how about you|"
    r"never ?mind|forget it|doesn'?t matter)\b"
)
_FILLER_WORDS = frozenset(
    "a an the so very really much too and but for that this it you your me i i'm am is are was be just again "
    "all of to in on with as well then now there here oh ah please lot lots bunch tons ever".split()
)

_SKILL_PATTERNS = {
    "remind": r"\bremind(?:er|ers)?\b|\bset (?:an? |my )?(?:alarm|timer)\b|\bwake me\b|\bdon'?t let me forget\b|"
    r"\b(?:ping|nudge|alert) me\b",
    "schedule": r"\b(?:re)?schedul\w*|\bcalendar\b|\bbook (?:a|an|me|the) (?:meeting|call|appointment|slot)\b|"
    r"\bset up (?:a|an) (?:meeting|call)\b",
    "list": r"\b(?:add|put|remove|delete|take|cross|tick|check)\b[^.?!]{0,80}?\b(?:to|on|onto|from|off)\b"
    r"[^.?!]{0,40}?\blist\b|"
    r"\b(?:my|our) (?:[a-z'-]+ ){0,2}(?:list|lists|to-?dos?|to do list)\b(?! of)",
    "remember": r"(?:^|[,.;!]\s*|\bplease |\bcan you |\bcould you |\band )(?:remember|memori[sz]e|note down|"
    r"keep in mind|don'?t forget|make a note|jot down|write down|save)\b(?! (?:when|how|what|if|the time))|"
    r"\b(?:remember|note|memori[sz]e|save) (?:that|this)\b|\bfor future reference\b",
    "recall": r"\bdo you (?:still )?(?:remember|recall|know) (?:what|when|where|who|my|if|whether|the|about|our)\b|"
    r"\bwhat did (?:i|we) (?:tell|say|mention|ask|share|talk|discuss|decide)\b|"
    r"\b(?:did|have) i (?:ever |already )?(?:tell|told|mention|mentioned|say|said)\b|"
    r"^(?:what|when|where|who|which)(?:'s| is| was| are| were| did)? (?:my|our)\b|\bremind me what (?:i|we|my)\b|"
    r"\bwhat do you (?:remember|recall)\b|\blast time (?:we|i) (?:talked|spoke|chatted)\b|"
    r"\bi (?:told|mentioned|said to) you\b|\b(?:have|did) i (?:set|add|save|schedule|ask you)\b",
    "introspect": r"\bwhat (?:else )?(?:do )?you know about (?:me|myself|my)\b|\bwhat have you (?:learned|learnt|"
    r"figured out|noticed) about (?:me|my)\b|\bhow well do you know me\b|\bwhat do you remember about me\b|"
    r"\btell me about myself\b|"
    r"\bwhat are my (?:preferences|interests|habits|patterns)\b|\bwhat do you think (?:you know )?about me\b",
    "goal": r"\b(?:my|new|set an?|set my) (?:[a-z-]+ ){0,2}(?:goal|goals|resolution|resolutions)\b|"
    r"\bprogress (?:on|toward|towards) my\b|\bhelp me (?:stick to|keep track|track)\b|\b(?:keep|hold) me accountable\b",
}
_SKILL_RES = {name: re.compile(pattern) for name, pattern in _SKILL_PATTERNS.items()}
_READ_QUESTION_RE = re.compile(r"^(?:what|which|how|when|where|who|do|did|have|has|are|is|am)\b")
_LIST_WRITE_RE = re.compile(r"\b(?:add|put|remove|delete|take|cross|tick|check)\b")
_NO_TASK_NEEDED_RE = re.compile(r"\b(?:alarm|timer)\b")
_REMIND_EXPLAIN_RE = re.compile(r"\bremind me (?:what|how|why|who)\b(?!.*\b(?:i|my|we|our)\b)")

_DAYS = r"mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?"
_MONTHS = r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t|tember)?|" \
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
_TIME_RE = re.compile(
    rf"\b(?:today|tonight|tonite|tomorrow|tmrw|tmr|tomorow|tommorow|noon|midnight|daily|weekly|monthly|"
    rf"this (?:morning|afternoon|evening|weekend|week)|next (?:week|month|year|weekend|{_DAYS})|(?:on )?(?:{_DAYS})s?|"
    rf"at \d{{1,2}}(?::\d\d)?|\d{{1,2}}(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.|o'?clock)|\d{{1,2}}:\d\d|"
    rf"in (?:a|an|\d+|a few|few|a couple of|couple of|half an) (?:min|mins|minutes?|hours?|hrs?|days?|weeks?|months?)|"
    rf"every (?:day|week|month|morning|evening|night|{_DAYS})|(?:{_MONTHS}) \d{{1,2}}(?:st|nd|rd|th)?|"
    rf"\d{{1,2}}(?:st|nd|rd|th)|end of (?:the )?(?:day|week|month)|(?:after|before) (?:work|lunch|dinner|school|bed)|"
    rf"later today|in the (?:morning|afternoon|evening)|at (?:lunch|dinner|breakfast|bedtime|night))\b"
)
_SKILL_WORDS = frozenset(
    "remind reminder reminders set alarm timer schedule reschedule calendar add put remove delete list lists shopping "
    "grocery groceries todo to-do remember note save goal goals new track please can could you me my book up make "
    "take keep mind jot write down don't forget".split()
)

_INTERROGATIVES = frozenset("what what's whats when where who whom whose why how which".split())
_AUXILIARIES = frozenset(
    "can could would will should is are do does did have has was were may might shall am isn't aren't don't doesn't "
    "didn't won't wouldn't can't couldn't shouldn't".split()
)
_SUBJECT_FIRST_AUX = frozenset("do does did don't doesn't didn't have has had".split())
_SUBJECTS = frozenset("i you we they he she it that this there my your our his her their people anyone u".split())
_VAGUE_ASK_RE = re.compile(
    r"^(?:i )?(?:need|want|would like|could use|have) (?:some |your |a little )?(?:help|a favou?r|a question)"
    r"(?: (?:with|on|about) (?:something|this|that|it|stuff))?(?: please)?\W*$|^(?:can|could) you help(?: me)?"
    r"(?: (?:with|on) (?:something|this|that|it))?\W*$"
)
_IMPERATIVE_VERBS = frozenset(
    "add book buy call cancel change check delete do email explain find fix get give help keep let list make move "
    "note open plan put read remember remind remove reply reschedule save schedule send set share show summarize "
    "summarise take tell text track translate update write draft describe compare suggest recommend create start "
    "stop finish forward message sort clear mark print erase rename".split()
)
_LEAD_IN_RE = re.compile(r"^(?:(?:please|pls|hey|ok|okay|so|and|also|now|can you|could you|would you)[ ,]+)+")
_STOPWORDS = frozenset(
    "a an the and or but if so of to in on at by for with from up about into over after before as is are was were "
    "be been am do does did have has had will would can could should may might must shall i me my mine we us our you "
    "your he him his she her they them their it its this that these those there here what when where who whom which "
    "why how not no yes just very really too also then than please pls thing things stuff one some any again more "
    "let let's i'm it's that's what's don't can't i'll you're something anything everything someone somewhere".split()
)
_THING_PRONOUNS = frozenset("it this that these those them there one".split())
_PERSON_PRONOUNS = frozenset("her him she he they them his hers".split())
_THAT_CLAUSE_RE = re.compile(r"\bthat (?:i|my|the|a|an|we|our|you|your|he|she|it's|there|this|his|her)\b")
_CONTEXT_DEPENDENT_RE = re.compile(
    r"^(?:and |but |so |ok )?(?:tell me more|more|go on|continue|keep going|and then|then what|why|why not|how so|"
    r"what else|what about (?:it|that|this|them|him|her|the other one)|the other one|"
    r"(?:do )?(?:the )?same (?:thing|again|as before|as last time)|(?:do it )?like (?:last time|before)|"
    r"do (?:it|that|the same)(?: again)?|again|which one|what do you mean|elaborate|"
    r"explain (?:that|it|more)|the first one|the second one|that one|this one)\W*$"
)
_HABITUAL_RE = re.compile(r"\bthe usual\b|\bsame as (?:always|usual|last time|before)\b|\blike (?:always|last time)\b")
_PERSON_CUE_RE = re.compile(
    r"\b(?:she|her|he|him|mom|mum|mother|dad|father|sister|brother|wife|husband|partner|boss|friend|colleague|"
    r"son|daughter|aunt|uncle|grandma|grandpa|girlfriend|boyfriend|manager|teacher|doctor|neighbou?r)\b"
)
_CAPITALISED_RE = re.compile(r"(?<=[a-z,] )[A-Z][a-z]+")
_CONFIRM_RE = re.compile(r"^(?:yes|yeah|yep|yup|sure|ok(?:ay)?|do it|go ahead|confirm(?:ed)?|please do|no|nope|cancel|"
                         r"don'?t|stop)\b")

@dataclass
class RoutingContext:
    """Everything the router looks at for one message; built by the digest job or ``engram route``."""

    text: str
    embedding: np.ndarray | None = None
    working_memory: Sequence[tuple[str, str]] = field(default_factory=list)  # (user_text, reply), most recent last
    context_warmth: float = 0.0
    memory_confidence: float = 0.0
    topic_confidence: float = 0.0
    topic_is_new: bool = False
    previous_mode: str | None = None
    turns_since_previous_mode: int = 1
    pending_confirmation: bool = False


@dataclass(frozen=True)
class TextView:
    """The normalised forms of a message that every signal function shares."""

    raw: str
    lower: str
    words: tuple[str, ...]
    content: tuple[str, ...]
    full_chars: int
    full_words: int


def text_view(text: str) -> TextView:
    """Normalise once: lower-case, straight apostrophes, words and content words.

    Only the head and tail of a long message are analysed (where greetings and requests sit), so
    routing time stays bounded for an 8,000-character paste; lengths are counted on the full text.
    """
    window = text if len(text) <= _HEAD_CHARS + _TAIL_CHARS else f"{text[:_HEAD_CHARS]} ... {text[-_TAIL_CHARS:]}"
    lower = window.replace("\u2019", "'").replace("\u2018", "'").lower().strip()
    words = tuple(_WORD_RE.findall(lower))
    content = tuple(w for w in words if w not in _STOPWORDS and (len(w) > 1 or w.isdigit()))
    full_words = len(words) if window is text else len(text.split())
    return TextView(window, lower, words, content, len(text), full_words)


def _flag(condition: bool) -> float:
    return 1.0 if condition else 0.0


def is_mash_token(token: str) -> bool:
    """Whether one lower-case token looks like keyboard mashing rather than a word or a laugh."""
    if len(token) < 3 or not token.isalpha() or _NOT_MASH_RE.match(token):
        return False
    if _REPEATED_CHUNK_RE.fullmatch(token):  # "jjjjjjj", "dfgdfgdfg"
        return True
    token = _ELONGATION_RE.sub(r"\1", token)  # "heyyy" and "sooooo" are words said slowly
    if len(token) <= 3:  # "lkj": only the unmistakable short ones, to spare acronyms like "css"
        return len(token) == 3 and any(token in row for row in _KEY_ROWS)
    vowels = sum(ch in "aeiouy" for ch in token)
    pairs = [token[i : i + 2] for i in range(len(token) - 1)]
    rare_ratio = sum(pair not in _COMMON_BIGRAMS for pair in pairs) / len(pairs)
    return (
        vowels == 0
        or re.search(r"[^aeiouy]{6,}", token) is not None
        or any(token in row or any(token[i : i + 5] in row for i in range(len(token) - 4)) for row in _KEY_ROWS)
        or ((chunk := _KEY_CHUNK_RE.fullmatch(token)) is not None and any(chunk[1] in row for row in _KEY_ROWS))
        or rare_ratio >= 0.4
        or (set(token) <= set("asdfghjkl") and len(token) >= 6 and vowels * 5 <= len(token))
    )


def text_features(view: TextView) -> dict[str, float]:
    """Length, sentence count, punctuation-only, emoji-only and keyboard-mash signals."""
    without_emoji = _EMOTICON_RE.sub(" ", _EMOJI_RE.sub(" ", view.raw))
    has_emoji = without_emoji != view.raw
    has_alnum = any(ch.isalnum() for ch in without_emoji)
    alpha = [w for w in view.words if w.isalpha()]
    mash = sum(is_mash_token(w) for w in alpha) / len(alpha) if alpha else 0.0
    sentences = len([s for s in _SENTENCE_END_RE.split(view.raw.strip()) if s.strip()])
    return {
        "char_len": float(view.full_chars),
        "word_count": float(view.full_words),
        "content_words": float(len(view.content)),
        "empty": _flag(not view.raw.strip()),
        "short": _flag(0 < view.full_words <= 3),
        "long": min(view.full_words, 30) / 30.0,
        "multi_sentence": _flag(sentences >= 2),
        "has_emoji": _flag(has_emoji),
        "emoji_only": _flag(has_emoji and not has_alnum),
        "punct_only": _flag(bool(view.raw.strip()) and not has_emoji and not has_alnum),
        "keyboard_mash": mash,
    }


def _is_aux_question(words: Sequence[str]) -> bool:
    # "Do the same as last time" / "have a great weekend" are not questions; "did I ..." / "have you ..." are.
    if len(words) < 2 or words[0] not in _AUXILIARIES:
        return False
    return words[0] not in _SUBJECT_FIRST_AUX or words[1] in _SUBJECTS


def interrogative_signals(view: TextView) -> dict[str, float]:
    """Question mark, wh-question and auxiliary-inverted question signals."""
    body = _WORD_RE.findall(_LEAD_IN_RE.sub("", view.lower))  # "so what's ..." / "hey, when ..."
    question_mark = "?" in view.raw
    wh = bool(body) and body[0] in _INTERROGATIVES
    aux = _is_aux_question(view.words) or _is_aux_question(body)
    return {
        "question_mark": _flag(question_mark),
        "wh_question": _flag(wh),
        "aux_question": _flag(aux),
        "question": _flag(question_mark or wh or aux),
    }


def phatic_signals(view: TextView) -> dict[str, float]:
    """Greeting, thanks, farewell and brief-reaction signals; ``phatic_only`` when nothing else is said."""
    greeting = _GREETING_RE.search(view.lower) is not None
    thanks = _THANKS_RE.search(view.lower) is not None
    farewell = _FAREWELL_RE.search(view.lower) is not None
    residue = _FAREWELL_RE.sub(" ", _THANKS_RE.sub(" ", _GREETING_RE.sub(" ", view.lower)))
    reaction = _PHATIC_RE.search(residue) is not None
    leftover = [w for w in _WORD_RE.findall(_PHATIC_RE.sub(" ", residue)) if w not in _FILLER_WORDS]
    any_phatic = greeting or thanks or farewell or reaction
    return {
        "greeting": _flag(greeting),
        "thanks": _flag(thanks),
        "farewell": _flag(farewell),
        "reaction": _flag(reaction),
        "phatic_only": _flag(any_phatic and not leftover),
    }


def skill_signals(view: TextView) -> dict[str, float]:
    """One signal per innate skill (remind, schedule, list, remember, recall, introspect, goal)."""
    body = _LEAD_IN_RE.sub("", view.lower)
    signals = {f"skill_{name}": _flag(regex.search(body) is not None) for name, regex in _SKILL_RES.items()}
    signals["skill_any"] = max(signals.values())
    signals["remind_explain"] = _flag(_REMIND_EXPLAIN_RE.search(view.lower) is not None)
    return signals


def is_action_request(view: TextView) -> bool:
    """Whether the message asks for a skill that writes something (and therefore needs slots)."""
    skills = skill_signals(view)
    return _is_write(view, skills) and not skills["remind_explain"]


def _is_write(view: TextView, skills: dict[str, float]) -> bool:
    if skills["skill_recall"] or skills["skill_introspect"]:
        return False  # "remind me what I said about X" reads, it does not write
    if skills["skill_remind"] or skills["skill_schedule"] or skills["skill_remember"]:
        return True
    if skills["skill_goal"]:
        return not _READ_QUESTION_RE.match(view.lower)  # "how am I doing on my goals?" reads
    return bool(skills["skill_list"]) and _LIST_WRITE_RE.search(view.lower) is not None


def _referring_words(view: TextView) -> tuple[set[str], set[str]]:
    words = set(view.words)
    things = words & _THING_PRONOUNS
    if "that" in things and _THAT_CLAUSE_RE.search(view.lower):
        things.discard("that")  # "remember that my code is 4312": a conjunction, not a pointer
    return things, words & _PERSON_PRONOUNS


def has_antecedent(person: bool, working_memory: Sequence[tuple[str, str]], lookback: int = 3) -> bool:
    """Whether recent exchanges offer something a pronoun could point at (a person when ``person``)."""
    texts = [text for pair in list(working_memory)[-lookback:] for text in pair if text]
    if person:
        return any(_PERSON_CUE_RE.search(t.lower()) or _CAPITALISED_RE.search(t) for t in texts)
    return any(len(text_view(t).content) >= 2 for t in texts)


def reference_signals(view: TextView, working_memory: Sequence[tuple[str, str]]) -> dict[str, float]:
    """Pronoun/deictic references, whether the message leans on them, and whether anything resolves them."""
    things, persons = _referring_words(view)
    context_dependent = bool(_CONTEXT_DEPENDENT_RE.match(view.lower) or _HABITUAL_RE.search(view.lower))
    content = _content_without_time(view)
    imperative = imperative_signals(view)["imperative"] > 0
    needs_context = context_dependent or (bool(things or persons) and (imperative or len(content) <= 2))
    # A long message usually carries its own antecedent ("my phone keeps crashing, can I fix it?").
    self_contained = not context_dependent and len(content) >= 4
    thing_ok = not (things or context_dependent) or self_contained or has_antecedent(False, working_memory)
    person_ok = not persons or self_contained or has_antecedent(True, working_memory) or bool(
        _PERSON_CUE_RE.search(" ".join(view.content)) or _CAPITALISED_RE.search(view.raw)
    )
    resolved = needs_context and thing_ok and person_ok
    return {
        "has_reference": _flag(bool(things or persons)),
        "context_dependent": _flag(context_dependent),
        "unresolved_reference": _flag(needs_context and not resolved),
        "resolved_reference": _flag(resolved),
    }


def _content_without_time(view: TextView) -> tuple[str, ...]:
    return text_view(_TIME_RE.sub(" ", view.lower)).content


def slot_signals(view: TextView, skills: dict[str, float], resolved_reference: bool,
                 working_memory: Sequence[tuple[str, str]] = ()) -> dict[str, float]:
    """Slot completeness for write actions: reminders/schedules need what and when, lists an item."""
    action = _is_write(view, skills) and not skills["remind_explain"]
    has_time = _TIME_RE.search(view.lower) is not None
    if resolved_reference and working_memory:  # "Schedule it." after "the dentist is on Friday at 10"
        has_time = has_time or _TIME_RE.search(working_memory[-1][0].lower()) is not None
    task_words = [w for w in _content_without_time(view) if w not in _SKILL_WORDS]
    has_task = bool(task_words) or resolved_reference or _NO_TASK_NEEDED_RE.search(view.lower) is not None
    needs_time = bool(skills["skill_remind"] or skills["skill_schedule"])
    complete = has_task and (has_time or not needs_time)
    return {
        "action_request": _flag(action),
        "has_time": _flag(has_time),
        "has_task": _flag(action and has_task),
        "slot_missing": _flag(action and not complete),
        "slots_complete": _flag(action and complete),
    }


def imperative_signals(view: TextView) -> dict[str, float]:
    """An imperative verb up front, and whether the request names anything beyond pronouns."""
    body = _WORD_RE.findall(_LEAD_IN_RE.sub("", view.lower))
    imperative = bool(body) and body[0] in _IMPERATIVE_VERBS
    rest = [w for w in body[1:] if w not in _STOPWORDS]
    vague = (imperative and not rest) or _VAGUE_ASK_RE.match(view.lower) is not None
    return {"imperative": _flag(imperative), "vague_request": _flag(vague)}


def context_signals(ctx: RoutingContext, recent_turns: int) -> dict[str, float]:
    """Conversation state passed in by the caller: warmth, memory and topic confidence, previous mode."""
    recent = ctx.turns_since_previous_mode <= recent_turns
    previous = (ctx.previous_mode or "").upper()
    return {
        "context_warmth": float(ctx.context_warmth),
        "memory_confidence": float(ctx.memory_confidence),
        "topic_confidence": float(ctx.topic_confidence),
        "topic_is_new": _flag(ctx.topic_is_new),
        "working_memory_empty": _flag(not ctx.working_memory),
        "prev_act": _flag(recent and previous == "ACT"),
        "prev_clarify": _flag(recent and previous == "CLARIFY"),
    }


def continuation_signals(view: TextView, ctx: RoutingContext, signals: dict[str, float]) -> dict[str, float]:
    """Anti-oscillation: a short answer right after CLARIFY/ACT continues the action instead of flipping mode."""
    after_action = bool(signals["prev_act"] or signals["prev_clarify"])
    substantive = not (signals["phatic_only"] or signals["punct_only"] or signals["emoji_only"])
    slot_fill = substantive and (bool(signals["has_time"]) or 0 < len(view.words) <= 6)
    last_was_action = bool(ctx.working_memory) and is_action_request(text_view(ctx.working_memory[-1][0]))
    return {
        "followup_fill": _flag(bool(signals["prev_clarify"]) and slot_fill),
        "skill_continuation": _flag(after_action and last_was_action and slot_fill and not signals["question"]),
        "confirmation_reply": _flag(ctx.pending_confirmation and _CONFIRM_RE.match(view.lower) is not None),
    }


def collect_signals(ctx: RoutingContext, recent_turns: int = 2) -> dict[str, float]:
    """Every text and context signal for one message (embedding similarities are added by the router)."""
    view = text_view(ctx.text)
    signals = text_features(view)
    signals.update(interrogative_signals(view))
    signals.update(phatic_signals(view))
    skills = skill_signals(view)
    signals.update(skills)
    signals.update(imperative_signals(view))
    references = reference_signals(view, ctx.working_memory)
    if signals["phatic_only"]:  # "that's great" points at nothing that needs resolving
        references.update(unresolved_reference=0.0, resolved_reference=0.0)
    signals.update(references)
    signals.update(slot_signals(view, skills, bool(references["resolved_reference"]), ctx.working_memory))
    signals.update(context_signals(ctx, recent_turns))
    signals.update(continuation_signals(view, ctx, signals))
    return signals
