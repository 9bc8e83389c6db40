"""How the user lives: with their parents, in a dorm, sharing, renting, in a home they bought, alone.
Pure.

我跟爸妈住在一起, then 在龙华买的两居，上周刚搬进去: a new home said without the word "moved", and
often without a city; "I rent a room in a house with four other grad students", then "Closed on a
little condo in Ypsilanti!". A statement that names a way of living none of the memory's ways is a
change of it. Two statements that name the same way (renting, then renting elsewhere) are left to the
other readings.
"""

import re

from memchat.memories.language.people import someone_else

_WAYS: dict[str, str] = {
    "parents": (
        r"(?:跟|和|与)(?:我)?(?:爸妈|父母|家里人|我妈|我爸)(?:一起)?住|住(?:在)?(?:爸妈|父母)家|住家里"
        r"|\blive[sd]? (?:with|at) (?:my|our) (?:parents|folks|mom|dad|mum)\b|\bliving (?:with|at) (?:my|our) "
        r"(?:parents|folks|mom|dad|mum)\b|\bmy parents'? (?:basement|house|place)\b|\bliving at home\b"
    ),
    "dorm": r"宿舍|\bdorms?\b|\bresidence hall\b|\bhall of residence\b",
    "shared": r"合租|室友|\broom ?mates?\b|\bhouse ?mates?\b|\bflat ?mates?\b|\bshare a (?:house|flat|apartment)\b|"
    r"\brent a room\b",
    "rent": r"租(?:了|的)?(?:个|一个|一间|间|套|一套)?[^，。,.]{0,6}?(?:房|单间|一居|两居|公寓|屋)|租房"
    r"|\b(?:i|we) rent\b|\b(?:i'm|we're|i am|we are) renting\b|\bsigned a lease\b",
    "own": r"买了?(?:套|一套)?[^，。,.]{0,8}?(?:房|两居|三居|一居|公寓)|房子交了|交房了|首付|房贷|自己的房子|自己的窝"
    r"|\b(?:bought|own) (?:a|our|my) (?:\w+ )?(?:house|home|condo|place|flat|apartment)\b|\bclosed on\b|\bmortgage\b",
    "alone": r"一个人住|自己住|独居|\bliv(?:e|ing) alone\b|\ball mine\b|\bmy own place\b|\bplace of my own\b",
}
_WAY = {way: re.compile(words, re.IGNORECASE) for way, words in _WAYS.items()}


def ways(text: str) -> set[str]:
    """The ways of living the text names for the user (none when it is about someone else)."""
    if someone_else(text) is not None:
        return set()
    return {way for way, words in _WAY.items() if words.search(text)}


def lives_otherwise(new_text: str, old_text: str) -> bool:
    """The memory names how the user lives, and the new statement names only other ways."""
    new = ways(new_text)  # first: most statements name no way of living, and this is asked of every memory
    if not new:
        return False
    old = ways(old_text)
    return bool(old) and not old & new
