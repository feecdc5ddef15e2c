"""Who the person is: the facts read from their words that the small model's block about them holds first (name, age,
where they are from or live, their work, family and pets), before their newest others."""

from __future__ import annotations

import re

from services.memory.job_titles import TRADES
from services.text import FAMILY, FIANCE, GRANDCHILD, any_of

# Who the person is: their name, age, where they are from or live, their work, their family and pets. The small
# model's block about the person holds their first facts of this kind before their newest others (the block holds
# twelve): "The user is originally from Enugu", told first, had been pushed out by later chatter, and "which city
# am I from?" was answered "New York".
IDENTITY_SALIENCE = 0.8
_KIN = "(?:" + any_of(FAMILY, FIANCE, GRANDCHILD, "sons daughters brothers sisters kids children child baby parents "
                      "grandkids grandchildren dog cat pet pets".split()) + ")"
# When the thing began, before who the person is: "From last month the user is …", "Since March, the user works …".
TIME_LEAD = re.compile(r"^(?:from|since|as of|starting(?: from)?)\s+(?:(?:last|this|next)\s+)?\w+,?\s+(?=the user\b)",
                       re.IGNORECASE)
# A learner's trade without its article ("the user is animal keeper in the zoo", "is bus driver here"; people24's
# zsofia: her new work stayed out of the block, and "Where I am working now?" was answered with her town).
NO_ARTICLE_TITLE = re.compile(r"^The user is (?:[a-z]+ )?(?P<title>[a-z]+)(?: (?:at|in|for|here|now)\b|[,.]|$)")
_VEHICLE = r"(?:trucks?|lorry|lorries|bus|buses|taxis?|cabs?|trams?|trains?|forklifts?|ambulances?|tractors?)"
_BUSINESS = (r"(?:shop|business|restaurant|caf[eé]|bakery|salon|farm|company|pub|stall|garage|practice|clinic|studio|"
             r"firm|nursery|takeaway)")
_WORKPLACE = (r"(?:hospital|school|branch|office|ward|unit|department|site|store|shop|team|base|station|clinic|"
              r"plant|depot|factory|warehouse|campus|lab|restaurant|hotel|ship|vessel|rig)")
IDENTITY = re.compile(
    r"^We live (?:in|with)\b|^The user(?:'s name is\b| lives? with\b| is (?:[A-Z][a-z]+|\d{1,3})\b"
    r"| is [a-z-]+ years (?:old|of age)\b| is [a-z][a-z'-]+, \d{1,3}\b"  # "im bree, 19, from winnipeg"
    r"| (?:is |was )?(?:originally |born and raised |born |[a-z]+ )?from [A-Z]"
    r"| (?:was born|grew up|lives?|work|works|worked) (?:in|at|as|for)\b"
    r"| (?:work|works|worked) like\b"  # a learner's "as" ("I work like pastry chef in a big hotel")
    # work told by what is done: "I drive truck for company Nordfrakt" (people23's vytautas: neither it nor the bus job
    # that replaced it reached the block, and "what is my work now?" was answered "a software developer")
    r"| (?:drive|drives) (?:an? |the )?(?:[a-z]+ )?" + _VEHICLE + r"\b| (?:drive|drives) for [A-Z]"
    r"| (?:run|runs|own|owns) (?:an? |my |our |the )?(?:[a-z]+ ){0,3}" + _BUSINESS + r"\b"
    # a new workplace told as a move: "I transferred na to another hospital! Nasa Abu Dhabi na ako" (people23's marivic,
    # told as a nurse in Dubai: "which city am I working in now?" was answered "Dubai")
    r"| (?:was |got |has been |have been |has |have |just )?(?:transferred|transfered|posted|moved) (?:na |now )?to "
    r"(?:an?other |a new |a different |the |our )?(?:[A-Z][A-Za-z]+ )?(?:[a-z]+ )?" + _WORKPLACE + r"\b"
    r"| (?:teach|teaches|taught) [a-z]+(?: [a-z]+)? (?:at|in)\b"
    r"| is an? (?!(?:bit|little|lot)\b)[a-z]+(?: [a-z]+)?(?: (?:at|in|for)\b|$|,)|'s " + _KIN + r"\b)")


def who_they_are(fact: str) -> bool:
    """A fact of who the person is (``IDENTITY``), also told after when it began ("From last month the user is animal
    keeper in the zoo of Nyíregyháza") or with a trade and no article ("The user is bus driver")."""
    fact = TIME_LEAD.sub("", fact)
    fact = fact[:1].upper() + fact[1:]
    if IDENTITY.match(fact):
        return True
    title = NO_ARTICLE_TITLE.match(fact)
    return title is not None and title["title"].lower() in TRADES
