"""Lexicons of a message's form: emoji, keyboard mashing, greetings, thanks, goodbyes, brief reactions, questions.

Compiled once at import (pure data, no I/O), like ``services/router/words.py`` (the lexicons of what a message
asks for); ``services/router/textview.py`` turns them into the form signals (mash, phatic talk, questions).
"""

from __future__ import annotations

import re

from services.router.ascii_twin import grouped, twinned
from services.router.prefilter import prefiltered

EMOJI_RE = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\ufe0f\u200d]")
EMOTICON_RE = prefiltered(r"(?<!\w)(?:[:;=8][-'^]?[)(\]\[dDpP/\\|*oO3]+|<3+|(?<!\^)\^_*\^(?!\^)|xD+|XD+)(?!\w)")
SENTENCE_END_RE = re.compile(r"[.!?]+(?:\s+|$)")
# Punctuation spoken to a phone that types what it hears: "add eggs comma flour and sugar to the list full stop",
# "save this note colon the code is 4471" (the word before is group 1, the mark group 2).
DICTATED_RE = re.compile(r"\b([a-z0-9']+) (full stop|question mark|exclamation (?:mark|point)|comma|colon)\b(?=\W|$)",
                         re.IGNORECASE)
DICTATED_MARKS = {"full stop": ".", "question mark": "?", "exclamation mark": "!", "exclamation point": "!",
                  "comma": ",", "colon": ":"}
# After these the words are a thing named, not a mark: "came to a full stop", "a question mark over it", "my colon".
NOT_DICTATED_AFTER = frozenset("a an the this that my your his her our their no one each every big huge oxford".split())
# A colon is spoken only after what hands something over ("note colon ..."), never in "colon cancer".
DICTATED_COLON_AFTER = frozenset(
    "note this that list following goal reminder it these self memo down called items".split())

# Letter pairs that occur in at least ten English words of four or more letters (from the
# MiniLM word-piece vocabulary). Keyboard mashing is made mostly of the other pairs.
COMMON_BIGRAMS = frozenset(
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
KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "poiuytrewq", "lkjhgfdsa", "mnbvcxz")
# The letter rows of other alphabets' keyboards (Russian ЙЦУКЕН, Greek), each both ways: "йцукенгшщ" is mashed.
_OTHER_ROWS = ("йцукенгшщзхъ", "фывапролджэ", "ячсмитьбю", "ςερτυθιοπ", "ασδφγηξκλ", "ζχψωβνμ")
OTHER_KEY_ROWS = _OTHER_ROWS + tuple(row[::-1] for row in _OTHER_ROWS)
# Korean letters typed one by one and never joined into syllables ("ㅁㄴㅇㄹ"); a laugh or a cry repeats one ("ㅋㅋㅋ").
HANGUL_JAMO_RE = re.compile(r"[\u3131-\u318e]+")
NOT_MASH_RE = re.compile(
    r"^(?:h+m+|m+h?m+|s+h+|p+f+t+|p+s+t+|g+r+|b+r+|z+|thx|thnx|nvm|pls|plz|tbh|smh|idk|btw|lmk|brb|ttyl|"
    r"wtf|omg|lol|lmao|rofl|ha(?:ha)+h?|he(?:he)+|hi(?:hi)+|lo(?:lo)+l?|ja(?:ja)+|a+h+|o+h+|u+g+h+|w+o+w+|y+a+y+|x+d+)$"
)
REPEATED_CHUNK_RE = re.compile(r"(.{1,3})\1{2,}.{0,2}")
ELONGATION_RE = re.compile(r"(.)\1{2,}")
KEY_RUNS_RE = re.compile(r"(?:(.)\1{2,}){3,}")  # "ppppplllllooooo": every key held down in turn
KEY_CHUNK_RE = re.compile(r"(.{2,4})\1+")  # "tyutyu": a run of neighbouring keys typed twice
KEY_CHUNK_TAIL_RE = re.compile(r"(.{3,4})\1+.{1,4}")  # "rtyrtyrtuu": typed twice, then a key or few more
# With no word of letters at all, one or two keys held or tapped in turn with a digit among them ("7777777777",
# "0o0o0o0o0o"): a mash, not a number anyone would send alone ("8am", "2020", "100000" are not).
HELD_DIGITS_RE = re.compile(r"(?=\D*\d)(.{1,2})\1{2,}")
HELD_DIGITS_MIN = 6

GREETING_RE = re.compile(
    r"^(?:hi+|hello+|hey+|hiya|heya|yo|howdy|greetings|sup|hallo|good (?:morning|afternoon|evening|day)|"
    r"morning|mornin'?|evening|what'?s up|wass?up|gm|"
    r"hola|buen(?:os|as) (?:d[ií]as|tardes|noches)|bonjour|salut|ciao|buongiorno|guten (?:morgen|tag|abend)|"
    r"ol[aá]|bom dia|merhaba|namaste|konnichiwa|hej|moin|cze[sś][cć])\b"
)
# Thanks in other languages, as people type them (with or without their accents); words.THANKS_LEAD_RE reads them too.
THANKS_ABROAD = (
    r"merci(?: beaucoup)?|danke(?: sch[öo]n| sehr)?|gracias|grazie(?: mille)?|obrigad[oa]|arigato|dank je(?: wel)?|"
    r"dank u(?: wel)?|vielen dank|shukriya|shukran|dzi[eę]kuj[eę]|kiitos|mersi|xi[eè] ?xi[eè]|"
    r"te[sş]ekk[uü]r(?:ler| ederim)?|spasibo|takk|gr[aà]cies|efcharist[oó]|rahmat|raxmat|terima kasih|salamat(?: po)?|"
    # In Cyrillic, maybe with "you": "спасибо", "благодаря ти", "дякую вам", "хвала".
    r"(?:спасибо|спасиба|благодарю|благодаря|дякую|дзякуй|хвала|фала)(?: (?:ти|ви|вам|тебе|тобі|большое|много))?"
)
# "Please" in other languages and Englishes, as typed: a request asks just as with "please" (Nigerian "abeg").
PLEASE_ABROAD = (r"por favor|porfa|bitte|per favore|s'il (?:te|vous) pla[iî]t|svp|alsjeblieft|alstublieft|prosz[eę]|"
                 r"abeg|l[uü]tfen|pros[ií]m|molim|kudasai|onegai")
THANKS_RE = prefiltered(
    r"\b(?:(?:thanks?|thank (?:you|u)|cheers|ta)(?: so much| a lot)? for [a-z]+ing (?:it|that|this|them|those)|"
    r"thanks?|thank (?:you|u)|thankyou|thx|thnx|ty|cheers|much appreciated|much obliged|appreciate (?:it|that)|"
    # Said alone as its own clause: "Nice one, appreciated.", "..., very kind" (not "I felt appreciated").
    r"(?<![a-z] )(?:(?:really |greatly |hugely |very )?appreciated|(?:very|so|too|most) kind(?: of (?:you|u))?)"
    r"(?=[\s.!]*$)|"
    rf"{THANKS_ABROAD}|ta)\b"
)
FAREWELL_RE = twinned(
    r"\b(?:bye+|goodbye|good ?night|night night|nighty|gn|see (?:you|ya)(?: later| tomorrow| soon)?|cya|"
    r"later|ttyl|talk (?:to you )?(?:later|soon|tomorrow)|take care(?! of (?!yourself|urself|you\b))|"
    r"catch you later|"
    r"have a (?:good|great|nice|lovely) (?:one|day|night|evening|weekend|trip|time)|"
    r"at[eé] (?:amanh[aã]|logo|mais)|hasta (?:luego|ma[nñ]ana|pronto)|[aà] (?:demain|bient[oô]t|plus)|ciao|"
    r"tsch[uü]ss|auf wiedersehen|adi[oó]s|sayonara|do widzenia|na razie)\b"
)
PHATIC_RE = grouped(
    r"\b(?:ok(?:ay)?|k+|kk|cool|nice one|nice|great|awesome|amazing|got it|"
    r"sounds (?:good|great|fine|perfect|fun|like a plan)|sure|alright|all right|lol|lmao|"
    r"ha(?:ha)+|he(?:he)+|yep|yeah|yup|yes|no worries|np|wow|oh|ah|hmm+|fine|perfect|noted|understood|"
    r"fair enough|makes sense|true|indeed|exactly|right|oops|omg|how are you(?: doing)?|how'?s it going|"
    r"how'?s (?:your|the) (?:day|week|weekend|morning|evening)(?: going| been)?|(?:that|this|it) works(?: for me)?|"
    r"you'?re (?:the best|awesome|great|amazing|a star)|love (?:it|that|you)|(?:that|this|it)(?:'s| is| was) "
    r"(?:so |really |very |super )?(?:great|nice|cool|funny|awesome|perfect|helpful|useful|hilarious|lovely|good|"
    r"kind|sweet|gone|done|sorted|fixed)|that (?:helps|helped|worked)|good (?:to know|job|stuff)|"
    r"well done|no problem|you too|same to you|welcome|wonderful|brilliant|excellent|sweet|neat|gotcha|"
    r"roger|thumbs up|hehe|aww+|yay|phew|ugh+|whatever|bless you|much better|all good|i'?m (?:good|fine|ok)|will do|"
    r"i'?ll try (?:that|it)|good idea|i see|anyway|ok(?:ey|ie)[- ]dok(?:ey|ie)|and you|how about you|"
    r"never ?mind|forget it|doesn'?t matter)\b"
)
FILLER_WORDS = frozenset(
    "a an the so very really much too and but for that this it you your me i i'm am is are was be just again "
    "all of to in on with as well then now there here oh ah please lot lots bunch tons ever".split()
)

# "Guess who ...?" announces news, it asks nothing ("Guess who finally passed her driving test??"), nor does "You'll
# never guess who ...".
# Nor does "(Well) would you believe it, ..." ("can you believe it", "could you credit this").
# Nor "Would you look at that, ..." (wonder at news, "would you just look at this!"), nor the cries of surprise shaped
# as commands that open news: "Stop the press: ...", "Hold the phone: ...", "Well, blow me down, ...", "Hot off the
# press — ..." (nothing is to be stopped, held or blown).
NEWS_CRY = (r"(?:stop|hold) the (?:press|presses|phone|front page)\b|hot off the press(?:es)?\b|"
            r"(?:blow|knock) me down(?: with a feather)?\b|strike me pink\b")
RHETORICAL_RE = re.compile(r"^(?:(?:oh|hey|so|ok|okay|omg|well|wow|gosh|ooh)[ ,!.]+)*(?:(?:(?:you'?ll|you will|u'?ll|"
                           r"ya'?ll) never )?guess (?:who|what|where|how|which|whose)\b|"
                           r"(?:can|could|would) (?:you|u|ya) (?:believe|credit) (?:it|this)\s*[,.!:;\u2013\u2014-]|"
                           # Or the disbelief said of oneself: "Can't believe it, the council filled the pothole".
                           r"(?:i )?(?:can'?t|cannot|couldn'?t|could not) (?:believe|credit) (?:it|this|that|"
                           r"my (?:eyes|ears|luck))\s*[,.!:;\u2013\u2014-]|"
                           r"(?:would|will) (?:you|u|ya) (?:just )?look at (?:that|this)\s*[,!]|"
                           rf"{NEWS_CRY})")
# A shrug after news asks nothing: "My team lost again, but what can you do.", "oh well, what are you gonna do?" (not
# "what can you do?" alone, nor after a greeting: it asks what the assistant can do).
SHRUG_RE = re.compile(
    r"(?:^|[,;.!\s])\s*(?:(?:but|oh well|ah well|well|still|eh|sigh|meh|ho hum)[,.!]*\s+)+what (?:else )?"
    r"(?:can|could|are|ya) (?:you|ya|u|ye|one|i|we)(?: (?:gonna|going to))? do\b"
    r"(?:,? (?:eh|hey|right|really|lol|haha|i guess|innit|about it))?[\s.!?]*$|"
    # Nor does a one-word verdict on one's own news: "Twelve lengths today, no stopping. Progress?"
    r"[.!]\s+(?:progress|improvement|success|growth|a win|winning)\?+\s*$")
# "What a day." exclaims, it asks nothing (unless its sentence ends in "?": "what a mess, where do I start?").
EXCLAMATIVE_RE = re.compile(r"^(?:(?:oh|god|man|wow|honestly)[ ,!.]+)*what an? [^.!?]*(?:[.!]|$)")
# A relative clause after a noun asks nothing: "I'm allergic to latex, which is fun in a dental practice", "my sister,
# who was a nurse, ..." (group 1: the word before the comma; after a lead-in — "ok, which is better" — or choices —
# "Aldi or Lidl, which is ..." — it asks, as it does before a comparison: "..., which is cheaper").
RELATIVE_CLAUSE_RE = re.compile(
    r"\b([a-z0-9'-]+), ((?:which|who) (?:is|was|are|were|means|meant|makes|made)\b)"
    # Not "..., which is better?" (a question); "..., which is more than last year" compares in a statement.
    r"(?! (?:the )?(?:more|less|most|least|best|worst|better|worse|[a-z]+(?:er|est))\b(?! than\b))")
CLAUSE_LEADS = frozenset(
    "ok okay so and but or right well hey hi hello yes yeah no also now then sorry thanks cheers one q question "
    "anyway alright honestly seriously actually".split()
)
# A question word typed without its vowels is still one: "hw many tablespoons in a cup".
INTERROGATIVES = frozenset(
    "what what's whats wat wats wot wots wht when whn where whr who whom whose why how hw which".split()
)
# A question asked inside a message or with no question mark: a question word opening a clause, then an auxiliary
# ("my car squeaks when I brake. what could it be", "in git, what's the difference between ...").
# A question asked as a statement: "I wonder why ...", "I'd like to know how ...".
INDIRECT_QUESTION_RE = prefiltered(
    r"(?:\bi(?:'m| am| was)? |^(?:just |was |been )?)(?:wonder(?:ing)?|curious) (?:why|how|what|if|whether|when|where|"
    r"who|which)\b|"
    # Asked with its answer's shape: "bleach on a wooden board yes or no".
    r"\b(?:yes or no|yay or nay|true or false)\W*$|"
    r"\b(?:i'd like|i would like|i want|i need) to know\b|"
    # A question announced: "hey quick q, does vinegar kill mould" (no question mark needed).
    r"\b(?:quick|random|silly|dumb|stupid|small|weird|odd|strange|daft|honest|serious|genuine) (?:q|qq|qn|question)\b|"
    # A question opening a later clause with no question mark: "the group got toxic, should i leave or stay".
    r"(?:[,;:]\s*|\b(?:but|and|or) )(?:should|shall|can|could|would|do|did) (?:i|we)\b|"
    # Or what a thing is: "they give me a headache, is that normal or are they just cheap", "... or is that a myth".
    r"(?:[,;:]\s*|\bor )(?:is|are|was|were) (?:that|this|it|they|these|those)\b(?! (?:why|because|cos)\b)|"
    # Or whether a thing will do, in a last clause: "... i only have baking powder, will the scones still rise".
    r"(?:[,;:]\s*|\b(?:but|so) )(?:will|would|does|did|can|could|won'?t|wouldn'?t) (?:the|my|our|it|they|this|that|"
    r"these|those)\b[^.!?,;:]*$|"
    # A last sentence in a question's word order, typed with no question mark: "... so i cant join in. am i being
    # paranoid".
    r"[.!]\s+(?:am|was|should|shall|do) i\b[^.!?]*$|[.!]\s+(?:are|were|should|shall|do) we\b[^.!?]*$|"
    r"[.!]\s+(?:is|was) (?:it|that|this) (?:normal|okay|ok|fine|weird|bad|wrong|right|me)\b[^.!?]*$"
)
# A question after a request about the request itself: "create a cabin list with propane, … is that how ya does it?",
# "… is this right?", "does that work?" (the request is still asked).
ABOUT_THE_ASK_RE = re.compile(r"^\s*(?:(?:so|ok|okay|and|or)[, ]+)?(?:(?:is|was|does|did|will|would) (?:that|this) "
                              r"(?:how|the way|right|correct|ok|okay|alright|work|works|enough)|"
                              r"(?:that|this) (?:ok|okay|right|correct|alright))\b")


def about_the_ask(questions: list[str], text: str) -> bool:
    """Whether the one question of ``text`` (``questions``, its question sentences) asks about what came before it."""
    only = questions[0] if len(questions) == 1 else ""
    return only.strip() != text.strip() and ABOUT_THE_ASK_RE.match(only) is not None


WH_CLAUSE_RE = prefiltered(
    r"(?:^|[,.;:!?]\s*|\b(?:but|and|so|ok|okay) )(?:what|wat|how|why|where|when|who|which)(?:'s|'re|'d| (?:is|are|"
    r"was|were|do|does|did|can|could|would|should|will|has|have|might|may|about)|(?<=what)s)\b|"
    # Terse, with a noun between and no question mark: "Lyngen ferry. What time does it go.", "which bus do i take";
    # or the question word alone at the end: "Need to get to Trondheim for the wedding. How."
    r"(?:^|[.;:!?]\s*)(?:what|which) (?!an?\b)[a-z]+ (?:is|are|was|were|do|does|did|can|should|will)\b|"
    r"(?:^|[.;:!?]\s*)(?:how|why|when|where)\W*$|"
    # What ails something, asked anywhere and typed without punctuation: "leaves going purple whats wrong with them".
    # (Not when it was found out: "I know what's wrong with the car now".)
    r"(?<!know )(?<!knew )(?<!out )(?<!see )(?<!saw )\bwhat'?s (?:wrong|up|going on|happening) with "
    r"(?:it|them|him|her|my|this|that|these|those|the|our)\b",
    grouped=True,
)
# A hedge before the question word: "roughly how many ml should a 6 week old have" asks all the same.
HEDGES = frozenset("roughly approximately realistically honestly seriously generally typically basically btw".split())
AUXILIARIES = frozenset(
    "can could would will should is are do does did have has was were may might shall am isn't aren't don't doesn't "
    "didn't won't wouldn't can't couldn't shouldn't".split()
)
SUBJECT_FIRST_AUX = frozenset("do does did don't doesn't didn't have has had".split())
SUBJECTS = frozenset("i you we they he she it that this there my your our his her their people anyone u".split())
