"""Lexicons of how the person is: distress or a plea for support (which wants a real answer), and the reassurance
that makes a passing mood something told.

Compiled once at import (pure data, no I/O), like ``services/router/words.py``; ``services/router/signals.py``
turns them into ``distress`` and ``tells``.
"""

from __future__ import annotations

import re

from services.router.prefilter import prefiltered

# Distress or a plea for support wants a real answer, not an acknowledgement: "I can't cope with work anymore",
# "I feel so alone since the move", "I'm really worried about my dad". A passing mood ("tired today") is told.
DISTRESS_RE = prefiltered(
    r"\b(?:(?:need|want|could use|please|pls) (?:some |your |a little )?help|help me|struggl\w*|overwhelm\w*|anxious|"
    r"anxiety|panic\w*|depress\w*|lonely|alone|desperate|scared|afraid|terrified|nervous|worried|"
    # Hopeless in oneself or in everything, not a day or a thing found useless ("Tuesdays are hopeless for me").
    r"(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )hopeless|(?:it|everything|life|this|all)(?:'s| is| feels| seems| was)"
    r"(?: (?:just|so|completely|totally|all))? hopeless|"
    r"worr(?:y|ying) about|stressed|heartbroken|devastated|miserable|can'?t (?:cope|sleep|stop|handle|take|deal|focus|"
    r"decide|figure)|(?:don'?t know|idk|dunno) (?:what|how|if|whether|why)|no idea (?:what|how)|"
    r"not sure (?:what|how|if|whether)|feel(?:ing)? sick (?:every|each|before|when|about|at the thought)|"
    # (Not "I could cry", which says how much a thing moves the person: "it slept through the night, I could cry".)
    r"falling apart|breaking down|(?<!could )cry(?:ing)?|hate my|sick of|fed up|burn(?:ed|t)? out|grie(?:f|ving)|"
    r"passed away|died|lost my (?:job|mum|mom|dad|mother|father)|"
    r"feel(?:ing|s)? (?:(?:so|really|very|pretty|quite|completely) )?(?:down|low|empty|numb|worthless|unmotivated|"
    r"useless|off|trapped|lost|broken)|"
    # Giving up on oneself, at the end of one's strength: "I'm failing at everything", "I can't do this anymore".
    r"failing at (?:everything|life)|such a failure|(?:i'?m|i am|i feel like) (?:a complete |a total |a )?failure|"
    r"can'?t do this(?: any ?more)?|end of my (?:rope|tether)|wits'? end|(?:want|going) to give up|giving up on|"
    # No point left in anything: "I don't see the point anymore", "what's the point of trying" (not "I don't see the
    # point of a smart meter": a thing found useless).
    r"(?:don'?t|do not|can'?t|cannot|no longer) see (?:the |any |a )?point(?= any ?more| in (?:anything|life|living|"
    r"trying|going on|it all)| of (?:anything|life|living|trying|going on|it all))|"
    r"what'?s the point (?:of|in) (?:anything|life|living|trying|going on|it all)|"
    r"barely (?:holding|coping|keeping)|"
    r"(?:nobody|no one|no-one) (?:cares|loves|understands|listens)|breaking point|not coping|"
    # Body and habits out of hand: "my heart is racing and I can't breathe", "I keep having nightmares" (not "scissors
    # are a nightmare"), "I think I'm drinking too much".
    r"can'?t breathe|heart (?:is |keeps )?(?:racing|pounding)|nightmares|flashbacks|drinking too much|self[- ]harm\w*|"
    r"suicid\w*|hurt(?:ing)? myself|"
    # Worn down by a life, or asking for company in it: "caring for my mother is breaking me", "I hate myself for it",
    # "I feel like I'm disappearing", "I really need someone to talk to".
    r"(?:is|are|it'?s) breaking me|hate myself|resent(?:ing|ful)? (?:her|him|them|my)|"
    r"i feel like i'?m (?:disappearing|drowning|invisible|going under|losing it|losing my mind)|"
    r"need (?:someone|somebody|anyone|anybody) to (?:talk|listen)|(?:haven'?t|have not) left the (?:house|flat|bed)|"
    # Nobody to turn to, and what keeps coming back after a death: "I don't know who else to tell", "I keep seeing his
    # face", "she didn't make it".
    r"(?:don'?t|do not) know who (?:else )?to (?:talk|turn|tell|say|speak|go)|"
    r"keep (?:seeing|hearing|reliving|replaying|thinking about) (?:it|him|her|them|his|her|their|the)|"
    r"(?:he|she|they|and|but) (?:didn'?t|did not|never) make it(?=\s*(?:[.;!]|$))|"
    r"couldn'?t (?:get|bring|save) (?:him|her|them) back)\b"
)
# A passing mood said with its own reassurance is told, not a plea: "bit stressed about exams but I'll survive lol",
# "nervous about the audition, but I've practised loads", "feeling a bit flat, nothing major", "nervous but ready".
REASSURED_RE = re.compile(
    r"\bbut (?:i think )?(?:i'?ll|i will|i'?m|i am|it'?ll|it will|we'?ll) (?:survive|live|manage|cope|pass|"
    # "stressed with exams but I'll get through it", "... but we'll pull through".
    r"get (?:through|over) (?:it|this|them)|pull through|get there|"
    r"be (?:fine|ok|okay|alright|grand|good)|fine|ok|okay|alright|good)\b|"
    r"\bbut (?:i'?ve|i have) (?:practi[sc]ed|prepared|revised|studied|trained|rehearsed)\b|"
    # Or with the better state it is in: "off to the interview, nervous but ready".
    r"\bbut (?:(?:i'?m|i am|feeling|also|still|kinda|quite|pretty) )?(?:ready|excited|prepared|hopeful|positive|"
    r"(?:fine|ok|okay|alright|good)(?! (?:at|with)\b))\b|"
    r"\bnothing (?:major|serious|too bad|dramatic)\b|"
    # A harm said not to have happened, in relief: "the project launched today and nobody died", "no one got hurt".
    r"\b(?:nobody|no one|no-one|noone|nothing)(?: actually| even)? (?:died|got hurt|was hurt|broke|caught fire|"
    r"exploded|"
    r"crashed|burned down|burnt down)\b(?=[\W_]*$)"  # at its end (not "nobody died but I'm still shaking")
)
# A machine that "died" broke down, nobody did: "the card machine died at lunch", "my phone died on the bus".
THING_DIED_RE = re.compile(
    r"\b(?:machine|phone|battery|laptop|computer|pc|tablet|printer|car|van|engine|fridge|freezer|kettle|dryer|washer|"
    r"charger|router|wifi|internet|tv|telly|screen|boiler|heater|torch|headphones|earbuds|watch|camera|till|drill|"
    r"mower|hoover|toaster|oven|microwave|scanner|radio|speaker|modem|remote|keyboard|mouse|sat ?nav|forklift|"
    r"generator)(?: (?:just|then|finally|totally|completely|has|had))? died\b"
)
# A worry of before that names what the news is about: "the chick we were worried about has started eating", "the
# scan I was nervous about came back clear" (a worry of now is no past: "the interview I'm nervous about is tomorrow").
PAST_WORRY_RE = re.compile(
    r"\b(?:the|that|this|those|these|my|our|his|her|their) (?:[a-z'-]+ ){1,3}?(?:(?:that|which|who) )?"
    r"(?:i|we|you|they|he|she|everyone|everybody) (?:was|were|had been) (?:(?:so|really|quite|a bit|very|all|"
    r"a little) )?(?:worried|nervous|scared|anxious|afraid|stressed|terrified) (?:about|of|over|for)"
    # and what became of it: "... has started eating", "... came back clear", "... is fine".
    r"(?= (?:has|have|had|is|are|was|were|turned|came|went|got|did|passed|ended|started|finally|just|actually|"
    r"worked|healed|arrived|showed)\b)"
)

_WORRIED = ("worried", "nervous", "scared", "anxious", "afraid", "stressed", "terrified")  # searched only with one


# A mood said as slight is a passing one, told: "Bit fed up today, the rain won't stop", "a little stressed, the kids
# were up at five" (not "I'm so fed up").
SOFTENED_MOOD_RE = re.compile(
    r"\b(?:(?:a )?(?:bit|little|tad|touch|wee bit)(?: of a)?|slightly|kinda|mildly) (?:fed up|down|low|flat|stressed|"
    r"nervous|sick of it|cheesed off)\b"
)


# A mood that comes back on the same occasions is a trait told, not a plea now: "I still get nervous at recitals", "I
# always get anxious before flights" (asked about, it is a question and answered anyway).
HABITUAL_MOOD_RE = re.compile(
    r"\b(?:still|always|usually|often|sometimes|even now) (?:get|gets|feel|feels) (?:a bit |a little |so |really )?"
    r"(?:nervous|anxious|scared|stressed|worried) (?:at|before|during|on|in|when|about)\b"
)


def not_of_the_person(lower: str) -> str:
    """``lower`` without what sounds like distress and is not the person's now: a machine that "died" ("the card
    machine died at lunch"), a worry of before ("the chick we were worried about has started eating"), a mood said as
    slight ("bit fed up today") or as a habit ("I still get nervous at recitals")."""
    lower = HABITUAL_MOOD_RE.sub(" ", SOFTENED_MOOD_RE.sub(" ", lower))
    lower = THING_DIED_RE.sub(" ", lower) if "died" in lower else lower
    return PAST_WORRY_RE.sub(" ", lower) if any(word in lower for word in _WORRIED) else lower


# A day told as it went, with nothing asked (issue 31, twelfth round): framed as a day, a shift or an update up front
# ("Long shift. Three funerals, ...", "Started at 4, delivered the sourdough ...", "Just back from a twelve hour shift
# on the bins ...", "So the update: ..."), or winding down at its end ("Home now.", "Feet up now.", "now I'm on the sofa
# with a cuppa"). Its times and its length make it look like a request or a story to answer; it is told.
DAY_TOLD_RE = re.compile(
    r"^(?:(?:so|well|right|ok|okay|oh|honestly|phew|god)[ ,!.]+)*(?:"
    r"(?:today|tonight|yesterday|this (?:morning|afternoon|evening))(?: (?:was|has been|i|we)\b|\s*[,:\u2014\u2013-])|"
    r"(?:(?:what an?|another|a|such an?|one|proper|real|right) )?(?:long|busy|mad|crazy|hectic|rough|tough|manic|full|"
    r"hard|brutal|exhausting|knackering|mental|wild|big|strange|weird|odd|funny|quiet|slow) (?:day|shift|one|night|"
    r"week|morning|afternoon|evening|weekend)\b|"
    r"just (?:back|home|in|off|finished|got (?:back|home|in|off))\b|"
    r"(?:started|up|woke(?: up)?|got up|clocked (?:on|in)) (?:at|before|early|around|from)\b|"
    r"(?:the |a |quick |little )?update\s*:)|"
    r"\b(?:home|back|in bed|on the sofa|feet up|kettle on|in the bath|bath|tea|bed) now\b|"
    r"\bnow (?:i'?m |we'?re )?(?:home|on the sofa|in bed|off to bed|in the bath|"
    r"with a (?:tea|cuppa|brew|beer|glass))\b|"
    r"\bit'?s been a (?:week|day|long one)\b"
)
# A day told is long: a line or two of events, not "busy day" alone (which is told anyway).
DAY_TOLD_MIN_WORDS = 20


# Bad news told, to be met with sympathy rather than cheer: the 1.5B's reaction opened "That's great to hear!" on
# "My back is hurting from sitting so much", "Otieno has left us" and "Paper is rejected from first journal"
# (people20-22's stored runs: 8 of 271 told messages read as bad news here, every one rightly). Good news beside it
# keeps the glad reaction ("finally passed after failing twice!"), unless the person calls it bad news.
_SAID_BAD_RE = re.compile(r"\b(?:bad|sad) news\b")
BAD_NEWS_RE = re.compile(
    r"\b(?:bad|sad|awful|terrible|horrible|rough|worst) news\b|"
    r"\b(?:sadly|unfortunately|gutted|devastated|heartbroken)\b|"
    r"\b(?:so |really |very |a bit |bit )?(?:disappointed|upset|frustrated|fed up)\b|"
    # The body: "my back is hurting", "sprained my ankle", "down with the flu".
    r"\b(?:is|are|was|been|keeps?|still|started|kept) (?:really |so |very )?(?:hurting|aching|killing me|sore|swollen|"
    r"bleeding)\b|"
    r"\b(?:sprained|twisted|broke|fractured|hurt|injured|pulled|cut|burnt|burned) (?:my|his|her|their|our) \w+|"
    r"\b(?:down with|caught|got|have|has|had) (?:the flu|flu|covid|food poisoning|a (?:bad |nasty |horrible )?"
    r"(?:cold|fever|migraine|chest infection|stomach bug|tummy bug))\b|"
    r"\b(?:i'?m|i am|i feel|feeling|been|was|is|are|she'?s|he'?s) (?:really |so |quite |very |a bit )?"
    r"(?:sick|ill|poorly|unwell)\b|"
    r"\bin (?:hospital|a&e|the er|intensive care|icu)\b|"
    # Things broken, lost or taken: "the boiler packed in", "car broke down", "my bike was stolen".
    r"\b(?:broke|broken) down\b|\bpacked (?:in|up)\b|\bstopped working\b|\b(?:gave|given) up the ghost\b|"
    r"\b(?:was|were|got|been|has been|have been) (?:stolen|nicked|robbed|burgled|broken into|flooded|cancell?ed|"
    r"rejected|refused|denied|turned down|fired|sacked|laid off|let go|made redundant|scammed|towed|clamped|"
    r"written off|put down|rehomed)\b|"
    r"\b(?:had to|have to|going to have to) (?:rehome|put (?:him|her|it|them) down|cancel|move out|sell)\b|"
    r"\b(?:lost|failed) (?:my|our|the|his|her) (?!weight\b|fear\b)\w+|\bfailed\b|"
    r"\b(?:didn'?t|did not|won'?t) (?:get|pass|make|win) (?:the|a|my|into|it)\b|"
    r"\bcrashed (?:the|my|his|her|our|into)\b|\b(?:flat tyre|flat tire|burst pipe|leak(?:ing)?)\b|"
    r"\bno (?:heating|hot water|power|electric)\b|"
    r"\b(?:split up|broke up|breaking up|divorc\w+|separat(?:ed|ing))\b|\b(?:has|have) left (?:us|me)\b|"
    r"\bfuneral\b|\b(?:couldn'?t|could not|can'?t|cannot) (?:get near|get in|get out|go|come|make it|afford|find)\b"
)
GOOD_NEWS_RE = re.compile(
    r"\b(?:good|great|brilliant|amazing|wonderful|exciting|happy|best) news\b|"
    r"\b(?<!not )(?<!n't )(?:so |very |really )?(?:proud|happy|excited|thrilled|delighted|relieved|chuffed)\b|"
    r"\bcan'?t wait\b|\bfinally\b|\byay\b|\bwoo+\b|\bpromoted\b|"
    r"\b(?:passed|got the job|got in|got into|we won|i won)\b|"
    r"!{2,}|\U0001F389"
)


def sad_news(text: str) -> bool:
    """Whether the message tells bad news (and no good news beside it, unless it says it is bad news)."""
    lower = text.lower()
    if _SAID_BAD_RE.search(lower):
        return True
    return BAD_NEWS_RE.search(lower) is not None and GOOD_NEWS_RE.search(lower) is None
