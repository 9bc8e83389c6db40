"""Slots an English statement fills, as `slots.py` reads them in Chinese. Pure.

"I live in Denver" fills `city` with denver; "we moved to Portland" fills it with portland, so the
second replaces the first. Values are lower-cased words; a value the statement negates ("don't call
me Jim") fills nothing. The keys are the Chinese reader's where the slot is the same (name, city, hometown,
job, age, reply_length, tone, relationship_status, study_work, diet), so mixed-language pairs compare too.
"""

import re

from memchat.memories.language.people import someone_before

_I = r"(?:\bi\b|\bi'm\b|\bi am\b|\bim\b)"
_NAME_WORD = r"([A-Z][a-zA-Z'-]{1,20})"
_PLACE = r"([A-Z][a-zA-Z.-]+(?:\s+[A-Z][a-zA-Z.-]+){0,2})"
_NOT_NAMES = {"Sorry", "Just", "Not", "So", "Really", "Still", "Also", "Here", "Back", "Fine", "Good", "Okay", "Ok"}

_NAME = re.compile(rf"\b(?i:my name is|my name's|name's|call me|i go by|i'm called|i am called)\s+{_NAME_WORD}")
# what others call one, beside the name: "Everybody calls me Kit", "The crew calls me Bones", "I go by Jules"
_NICKNAME = re.compile(
    rf"\b(?:(?i:everyone|everybody|people|they|friends|the\s+\w+|my\s+\w+|all\s+my\s+\w+)\s+(?:\w+\s+){{0,2}}?"
    rf"(?i:calls?|called)\s+me|(?i:i go by))\s+{_NAME_WORD}"
)
_OFFERED = re.compile(r"\byou can too\b|\bso can you\b", re.IGNORECASE)  # the nickname offered to the agent
# "I'm Dana" / "I am Dana": only a capitalised word alone after it (not "I'm Tired of it")
_REAL_NAME = re.compile(
    rf"\b(?i:(?:use|call me by|go with) my (?:real |actual |full )?name|my real name is),?\s+{_NAME_WORD}"
)
_PET_NAME = re.compile(
    rf"\b(?i:my|our)\s+(?:\w+\s+)?(?i:(dog|cat|puppy|pup|kitten|bird|hamster|rabbit|bunny|parrot|turtle|horse))"
    rf"(?:'s name is|,)?\s+(?:(?i:is\s+)?(?i:named|called)\s+)?{_NAME_WORD}"
)
_PET_KINDS = {"pup": "dog", "puppy": "dog", "kitty": "cat"}
# a pet brought home and named in the same breath: "Brought home a rescue pup, we're calling him Waffles"
_PET_CALLED = re.compile(
    rf"\b(?i:(dog|cat|puppy|pup|kitten|kitty|bird|hamster|rabbit|bunny|parrot|turtle|horse))\b[^.!?]{{0,40}}?"
    rf"\b(?i:(?:we're|we are|i'm|i am)\s+(?:calling|naming)|(?:we|i)\s+(?:named|called|call))\s+(?i:him|her|it|them)\s+"
    rf"{_NAME_WORD}"
)
_IM_NAME = re.compile(rf"^(?i:hi|hey|hello)?[,!\s]*(?i:i'm|i am|this is)\s+{_NAME_WORD}(?=\s*(?:[,.!;]|and\b|$))")
_CITY = re.compile(
    rf"\b(?i:(?:i|we)\s+(?:now\s+|still\s+|currently\s+|just\s+|recently\s+|finally\s+)?"
    rf"(?:live|lived|living|moved|move|relocated|am living|'m living|settled|'m based|am based|are based|landed"
    rf"|ended up)"
    rf"\s+(?:back\s+)?(?:in|to|over to|out to))\s+{_PLACE}"
)
# where one's home is: "We rent a place in Sacramento", "bought a house in Reno", "own a condo in Miami"
_HOME_IN = re.compile(
    rf"\b(?i:(?:i|we)\s+(?:\w+\s+)?(?:rent|rented|are renting|'re renting|bought|own|got|found|share)\s+"
    rf"(?:a|an|our|my)\s+(?:\w+\s+)?(?:place|house|home|apartment|flat|condo|studio|townhouse|duplex)\s+in)\s+{_PLACE}"
)
# a new home named by where it is: "our new place in Portland", "signed a lease on a two-bedroom in Jersey City"
_NEW_HOME_IN = re.compile(
    rf"\b(?i:(?:our|my)\s+new\s+(?:place|house|home|apartment|flat|condo|studio|townhouse)"
    rf"|(?:signed|got)\s+a\s+lease\s+on\s+(?:a|an)\s+(?:[\w-]+\s+){{0,2}}?[\w-]+)\s+in\s+{_PLACE}"
)
# the shift one works: "the night shift", "graveyard shift", "I work nights", "they put me on days"
_SHIFT = re.compile(
    r"\b(?i:(day|night|morning|early|late|evening|overnight|graveyard|swing|afternoon)[- ]shifts?"
    r"|(?:work|working|worked|on|to|onto)\s+(nights|days|overnights))\b"
)
_SHIFT_NAMES = {
    "days": "day",
    "nights": "night",
    "overnight": "night",
    "overnights": "night",
    "graveyard": "night",
    "early": "morning",
    "late": "evening",
    "swing": "evening",
    "afternoon": "evening",
}
# the partner's name ("my girlfriend Naomi", "now I'm seeing Beatriz", "dating a guy named Theo") and
# a break-up ("we ended things", "I broke up with him"): both fill `name:partner`, so a new one replaces
_PARTNER_NAMED = re.compile(
    rf"\b(?i:my\s+(?:new\s+)?(?:girlfriend|boyfriend|partner|fianc[ée]e?|wife|husband))"
    rf",?\s+(?:(?i:is\s+)?(?i:named|called)\s+)?{_NAME_WORD}"
)
_DATING = re.compile(
    rf"\b(?i:(?:i'm|i am|i've been|i have been|started|been)\s+(?:now\s+)?(?:seeing|dating))\s+"
    rf"(?:(?i:an?\s+[\w-]+\s+(?:named|called)\s+)"
    rf"|(?i:(?:someone|somebody|an?\s+[\w-]+)(?:\s+new)?(?:\s+now)?[,;]?\s+(?:her|his|their)\s+name(?:'s|\s+is)\s+))?"
    rf"{_NAME_WORD}"
)
_BREAK_UP = re.compile(
    r"\b(?:we|i)\s+(?:\w+\s+)?(broke up|split up|ended things|called it quits)\b|\bwe're\s+(done|over)\b",
    re.IGNORECASE,
)
# "... and moved to Seattle" / "moved back home to Duluth" / "ended up moving to Boulder" / "since the move
# to Albuquerque" anywhere, unless someone else moved ("my best friend moved to Chicago")
_MOVED_TO = re.compile(
    rf"\b(?i:(?:moved|relocated|(?:ended|wound)\s+up\s+(?:moving|relocating))"
    rf"\s+(?:back\s+home\s+|back\s+|over\s+|out\s+|home\s+)?to"
    rf"|(?:since|after)\s+(?:the|our|my)\s+move\s+to)\s+{_PLACE}"
)
_SOMEONE_ELSE = re.compile(
    r"\b(?:my|her|his|their|our)\s+(?:\w+\s+){0,3}(?:just\s+|recently\s+|finally\s+)?$|\b(?:she|he|they)\s+(?:just\s+)?$",
    re.IGNORECASE,
)
_CAR = re.compile(
    r"(?:\b(?i:i|we)\s+(?:\w+\s+)?(?i:drive|bought|got|own|lease|picked up|traded|switched|upgraded|replaced)\b"
    r"[^.!?;]{0,40}?"
    r"|\b(?i:my|our)\s+(?:(?i:old|new|used|trusty|\d{4})\s+)*"
    r"|(?:(?:^|\band\s+|[,;]\s*)(?i:got|bought|picked up|leased)|\b(?i:went into|went toward))"
    r"\s+(?i:a|an)\s+(?:(?i:new|used|\d{4})\s+)*)\b"
    r"(Honda|Toyota|Ford|Tesla|Subaru|Chevy|Chevrolet|Nissan|Mazda|Hyundai|Kia|BMW|Audi|Jeep|Volkswagen|VW|Volvo|"
    r"Mercedes|Lexus|Dodge|GMC|Prius|Civic|Corolla|Camry|Rivian)(?:\b|(?=\d))"
)
_SCHOOL = re.compile(
    r"\b(?:in|at|to|into|attending|started|starting|switched to|applying to|going to)\s+"
    r"((?:law|nursing|med|medical|grad|graduate|business|art|film|culinary|dental|vet|pharmacy|engineering)\s+school)\b",
    re.IGNORECASE,
)
_CITY_BASED = re.compile(
    rf"\b(?i:(?:i'm|i am|we're|we are)\s+(?:now\s+|still\s+)?(?:based\s+|living\s+|back\s+|back home\s+)?in)\s+{_PLACE}"
)
# "I live in a tiny town outside Boise"
_CITY_NEAR = re.compile(
    rf"\b(?i:(?:i|we)\s+(?:now\s+)?(?:live|moved|relocated)\s+(?:in|to)\s+an?\s+(?:\w+\s+){{0,2}}"
    rf"(?:town|city|suburb|village|place)\s+(?:outside|near|north of|south of|east of|west of|close to))\s+{_PLACE}"
)
_HOMETOWN = re.compile(
    rf"\b(?i:(?:i'm|i am|i come)\s+(?:originally\s+)?from)\s+{_PLACE}|\b(?i:i grew up in)\s+{_PLACE}"
)
_JOB_NOUN = (
    r"(?:teacher|nurse|engineer|developer|programmer|designer|manager|accountant|lawyer|paralegal|doctor|"
    r"dentist|chef|cook|barista|driver|pilot|writer|editor|journalist|translator|artist|musician|photographer|"
    r"consultant|advisor|adviser|analyst|architect|scientist|researcher|professor|tutor|librarian|pharmacist|"
    r"therapist|counselor|counsellor|electrician|plumber|mechanic|carpenter|firefighter|officer|cop|"
    r"salesperson|cashier|clerk|receptionist|assistant|secretary|intern|freelancer|founder|owner|ceo|"
    r"banker|trader|recruiter|marketer|vet|veterinarian|paramedic|technician|caregiver|caretaker|"
    r"bartender|waiter|waitress|server|janitor|farmer|soldier|coach|trainer|instructor|surgeon|midwife|"
    r"student|retiree|homemaker|stay-at-home (?:mom|dad|parent)|sahm|sahd|ux designer|data scientist|"
    r"software engineer|web developer|project manager|store manager|shift lead|supervisor|director|ranger|"
    r"coordinator|carrier|groomer|adjuster|coder|apprentice|aide|hygienist|dispatcher|courier|welder|associate|"
    r"inspector|bookkeeper|teller|custodian|landscaper|machinist|butcher|baker|stylist|hairdresser|barber|"
    r"housekeeper|nanny|lifeguard|security guard|interpreter|producer|illustrator|operator|specialist|rep|"
    r"planner|sommelier|trucker|contractor|foreman|principal|lecturer|auditor|estimator|installer)"
)
_JOB = re.compile(
    rf"\b(?:i work as|i'm working as|i am working as|i'm|i am|i've become|i became|i'm now|i am now|"
    rf"i've been|i have been|i was|i used to be|started as|started working as|hired as|now work as|"
    rf"my job is|i got a job as|i'm employed as|work as)\s+(?:now\s+)?(?:an?\s+|the\s+)?"
    rf"((?:[a-z-]+\s+){{0,3}}?{_JOB_NOUN})s?\b",
    re.IGNORECASE,
)
# "I teach math", "I manage a bubble tea shop", "I run a bakery", "I nurse"
_JOB_VERB = re.compile(
    r"\bi\s+(?:now\s+|still\s+)?(teach|manage|run|own|nurse|tutor|code|program|design|drive|cook|bartend)"
    r"(?:es|s)?\s+(?:at\s+|for\s+|in\s+)?(?:an?\s+|the\s+|my\s+)?([a-z][a-z -]{2,30}?)"
    r"(?=[,.;!]|\s+(?:and|but|at|in|for|now)\b|$)",
    re.IGNORECASE,
)
# A new job told as its start, which replaces the one before: "Got hired on at the post office as a
# mail carrier", "Costco hired me", "Took a sommelier job at a steakhouse", "picked up work as a
# wedding photographer", "promoted to assistant store manager", "apprenticing with an electrician".
# The value is the title where one is said, else the workplace, else that there is a new job.
_TITLE = r"((?:[a-z0-9-]+\s+){0,3}?[a-z-]+)"
_TITLE_END = (
    r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:at|for|in|on|with|by|last|this|next|since|and|but|from|so|now|today|"
    r"yesterday|recently|ago|two|three|a few|\d+)\b)"
)
_WORKPLACE = r"(?:the\s+|an?\s+)?([^,.;!?]{2,40}?)(?=\s+as\b|" + _TITLE_END[3:]  # a title may follow
_NOT_A_JOB_YET = r"(?!\s+(?:interview|offer|fair|hunt|search|application|listing|posting|board)s?\b)"
_NEW_JOB = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"\b(?:hired(?:\s+on)?|started|starting)(?:\s+(?:at|by|with|in)\s+{_WORKPLACE})?\s+as\s+(?:an?\s+|the\s+)?"
        rf"{_TITLE}{_TITLE_END}",
        rf"\bhired(?:\s+on)?\s+(?:at|by|with|in)\s+{_WORKPLACE}",
        rf"\b(?:took|landed|got|found|accepted|started|starting)\s+(?:a|an|the|my)\s+(?:new\s+)?"
        rf"(?:full-time\s+|part-time\s+|remote\s+|contract\s+|permanent\s+)?(?:job|position|role|gig){_NOT_A_JOB_YET}"
        rf"(?:\s+as\s+(?:an?\s+|the\s+)?{_TITLE}{_TITLE_END}|\s+(?:at|with)\s+{_WORKPLACE})?",
        rf"\b(?:took|landed|got|found|accepted|started)\s+(?:a|an)\s+(?!new\b|full-time\b|part-time\b|remote\b)"
        rf"([a-z-]+(?:\s+[a-z-]+)?)\s+(?:job|position|gig){_NOT_A_JOB_YET}",
        rf"\b(?:picked up work|started|starting|start|now working)\s+as\s+(?:an?\s+|the\s+)?{_TITLE}{_TITLE_END}",
        rf"\b(?:promoted|bumped up|moved up)\s+to\s+(?:an?\s+|the\s+)?{_TITLE}{_TITLE_END}",
        rf"\bapprenticing\s+(?:with|as|under)\s+(?:an?\s+|the\s+)?{_TITLE}{_TITLE_END}",
    )
)
_HIRED_ME = re.compile(r"\b([A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*){0,2})\s+(?i:hired me)\b")
_IN_PLACE = re.compile(rf"\s+in\s+{_PLACE}")
_RELATIVE = (
    r"(?i:my\s+(wife|husband|partner|boyfriend|girlfriend|fianc[ée]e?|mom|mother|dad|father|son|daughter|brother|"
    r"sister|kid|roommate|best friend|friend|cousin|aunt|uncle|grandma|grandpa))"
)
_RELATIVE_JOB = re.compile(
    rf"{_RELATIVE}(?:'s|\s+is)\s+(?:now\s+)?(?:an?\s+)?((?:[a-z-]+\s+){{0,2}}?{_JOB_NOUN})s?\b", re.IGNORECASE
)
_RELATIVE_CITY = re.compile(rf"{_RELATIVE}\s+(?:lives|is living|moved|is based|works)\s+(?:in|to)\s+{_PLACE}")
_RETIRED = re.compile(r"\bi(?:'m| am| just| have|'ve)?\s+(?:now\s+)?retired\b|\bi retired\b", re.IGNORECASE)
_AGE = re.compile(
    r"\bi(?:'m| am| just| turned| just turned)\s+(?:turned\s+)?(\d{1,3})"
    r"(?:\s+years?\s+old|\s*yo\b|\s*(?=[,.;!]|$)|(?=\s+(?:and|today|now|this|next|as of)\b))",
    re.IGNORECASE,
)
_WEEKDAY = r"(mon|tues|wednes|thurs|fri|satur|sun)(?:day)s?"
_CLOCK = re.compile(
    r"\b(wake up|get up|getting up|waking up|(?<=i'm )up|(?<=i am )up|go to bed|going to bed|go to sleep|sleep|"
    r"start work|get off work|finish work|leave work|eat dinner)"
    r"\s+(?:at\s+|around\s+|by\s+)(\d{1,2}(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)?)",
    re.IGNORECASE,
)
_WEEKLY = re.compile(
    rf"\b(?:my\s+)?([a-z]+(?:\s+[a-z]+)?)\s+(?:class|lesson|lessons|practice|session|night|club|group|meeting|shift|day)s?"
    rf"\s+(?:is|are|was|were|moved|got moved|changed|switched)?\s*(?:to\s+|on\s+|every\s+)?{_WEEKDAY}",
    re.IGNORECASE,
)
_SHORT = re.compile(
    r"\b(?:short|shorter|brief|briefer|concise)\s+(?:replies|answers|responses|messages)\b|\bkeep (?:it|them|replies|"
    r"answers) (?:short|brief)\b|"
    r"\bkeep (?:your |the |my )?(?:replies|answers|responses|messages) (?:short|brief)\b|\bfewer words\b|\btl;?dr\b",
    re.IGNORECASE,
)
_LONG = re.compile(
    r"\b(?:long|longer|detailed|more detailed|in-depth|thorough)\s+(?:replies|answers|responses|explanations)\b|"
    r"\bmore detail\b|\bgo into detail\b|\belaborate\b",
    re.IGNORECASE,
)
_CASUAL = re.compile(r"\b(?:casual|less formal|informal|relaxed|chill)\b", re.IGNORECASE)
_FORMAL = re.compile(r"(?<!less )(?<!not so )\b(?:formal|professional|polite)\b(?! anymore)", re.IGNORECASE)
_SINGLE = re.compile(
    r"\b(?:i'm|i am|i'm now|i am now)\s+(?:single|divorced|widowed)\b|\bwe (?:broke up|split up|split)\b|"
    r"\bbroke up with\b|"
    r"\bgot divorced\b|\b(?:i|we) broke up\b|\band i (?:broke up|split up|split)\b|\bi'm not seeing anyone\b",
    re.IGNORECASE,
)
_TAKEN = re.compile(
    r"\b(?:i'm|i am|we're|we are|we just got|i just got|got)\s+(?:now\s+)?"
    r"(?:engaged|married|dating|in a relationship)\b|"
    r"\bmy (?:girlfriend|boyfriend|partner|fianc[ée]e?|wife|husband)\b|"
    r"\bi (?:have|'ve got|got) a (?:girlfriend|boyfriend|partner)\b|\b(?:i'm|i've been|been)\s+(?:seeing|dating)\s+"
    r"(?:someone|somebody)\b|\bstarted (?:dating|seeing) (?:someone|somebody|a (?:guy|girl|man|woman))\b",
    re.IGNORECASE,
)
_STUDENT = re.compile(
    r"\b(?:i'm|i am)\s+(?:a\s+)?(?:student|(?:freshman|sophomore|junior|senior|grad student|phd student))\b|"
    r"\bi(?:'m| am)? (?:studying|majoring in|in grad school|in college)\b",
    re.IGNORECASE,
)
_MAJOR = re.compile(
    r"\b(?:majoring in|major is|switched (?:my major )?to|my major to|declared (?:my |a )?major(?: in| as)?"
    r"(?:\s+(?:today|yesterday|this week|last week))?,?|\bI(?:'m| am)\b[^.!?;]{0,40}?\bstudying"
    r"(?!\s+(?:for|to|at|in|on|with|hard|abroad|late|all|so|a lot|more|less|again)\b))\s+([a-z][a-z ]{2,30}?)\b"
    r"(?=[,.;!]|\s+(?:and|but|now|at)\b|$)",
    re.IGNORECASE,
)
_VEGGIE = re.compile(
    r"\b(?:vegetarian|vegan|plant-based|don't eat meat|do not eat meat|no longer eat meat|gave up meat|"
    r"stopped eating meat|pescatarian)\b",
    re.IGNORECASE,
)
_MEAT = re.compile(
    r"\b(?:meat lover|meat-lover|carnivore|love (?:my )?meat|love steak|eat (?:a lot of )?meat|meat and potatoes|"
    r"(?:started|start|back to|went back to|going back to) eating (?:meat|chicken|beef|pork|steak|burgers|fish|eggs)"
    r"|eat(?:ing)? (?:meat|chicken|beef|pork|steak|fish|eggs)(?: and \w+)? (?:again|now)"
    r"|(?:meat|fish|eggs|chicken)(?: and (?:meat|fish|eggs|chicken|dairy))? (?:are|is) back on my plate)\b",
    re.IGNORECASE,
)
_EVENT = re.compile(
    r"\b(interview|exam|finals|surgery|operation|appointment|wedding|flight|trip|recital|presentation|pitch|"
    r"checkup|check-up|graduation|vaccination|audition|competition|tournament|race|marathon|concert|date|defense)\b"
    r"[^.!?;]{0,40}?\b(tomorrow|tonight|next (?:mon|tues|wednes|thurs|fri|satur|sun)day|next week|next month|"
    r"this (?:mon|tues|wednes|thurs|fri|satur|sun)day|on (?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"on the \d{1,2}(?:st|nd|rd|th)|in (?:\d+|two|three|a few) (?:days|weeks)|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]* \d{1,2})",
    re.IGNORECASE,
)
_NEGATED_BEFORE = re.compile(r"(?:\bdon't|\bdo not|\bnot|\bnever|\bno longer|n't)\s+(?:\w+\s+)?$", re.IGNORECASE)
_CLOCK_NAMES = {
    "up": "wake up",
    "get up": "wake up",
    "getting up": "wake up",
    "waking up": "wake up",
    "go to sleep": "go to bed",
    "going to bed": "go to bed",
    "sleep": "go to bed",
}
_EITHER_OR: tuple[tuple[str, tuple[tuple[re.Pattern[str], str], ...]], ...] = (
    ("reply_length", ((_LONG, "long"), (_SHORT, "short"))),
    ("tone", ((_CASUAL, "casual"), (_FORMAL, "formal"))),
    ("relationship_status", ((_SINGLE, "single"), (_TAKEN, "taken"))),
    ("diet", ((_VEGGIE, "vegetarian"), (_MEAT, "meat"))),
)


def _by_someone_else(text: str, start: int) -> bool:
    """What is said at `start` is said of someone else ("my best friend moved to Chicago")."""
    return bool(_SOMEONE_ELSE.search(text[max(0, start - 40) : start]))


# someone named just before what is said of them: "Jamie got promoted to captain"
_NAMED_BEFORE = re.compile(r"\b([A-Z][a-z]+)\s+(?:just\s+|finally\s+|recently\s+)?(?:got|was|has\s+been|is)\s+$")
_SENTENCE_WORDS = {"Just", "Finally", "Recently", "Also", "So", "Well", "Anyway", "Today", "Yesterday", "Then", "And"}


def _named(text: str, start: int) -> bool:
    """What is said at `start` is said of someone named just before it, not of the user."""
    m = _NAMED_BEFORE.search(text[max(0, start - 30) : start])
    return m is not None and m.group(1) not in _SENTENCE_WORDS


def _positive(text: str, start: int) -> bool:
    return not _NEGATED_BEFORE.search(text[max(0, start - 16) : start])


def _job_value(title: str) -> str:
    return re.sub(r"\s+", " ", title.lower().strip())


def read_slots_en(text: str) -> dict[str, set[str]]:
    """The slots an English `text` fills (slot -> values)."""
    found: dict[str, set[str]] = {}

    def put(key: str, value: str) -> None:
        found.setdefault(key, set()).add(value.lower().strip().rstrip("."))

    for m in _NAME.finditer(text):
        if _positive(text, m.start()) and m.group(1) not in _NOT_NAMES:
            put("name", m.group(1))
    for m in _NICKNAME.finditer(text):
        if m.group(1) not in _NOT_NAMES:
            put("nickname", m.group(1))
            if _OFFERED.search(text):
                put("name", m.group(1))  # "my crew calls me Sparky, you can too": what to call the user
    for m in _REAL_NAME.finditer(text):
        put("name", m.group(1))
    for m in _PET_CALLED.finditer(text):
        if m.group(2) not in _NOT_NAMES and not _by_someone_else(text, m.start()):
            kind = m.group(1).lower()
            put(f"name:{_PET_KINDS.get(kind, kind)}", m.group(2))
    for m in _PET_NAME.finditer(text):
        if m.group(2) not in _NOT_NAMES:
            kind = m.group(1).lower()
            put(f"name:{_PET_KINDS.get(kind, kind)}", m.group(2))
    introduced = _IM_NAME.search(text)
    if introduced is not None and introduced.group(1) not in _NOT_NAMES:
        put("name", introduced.group(1))
    for pattern in (_CITY, _CITY_BASED, _CITY_NEAR, _HOME_IN, _NEW_HOME_IN):
        for m in pattern.finditer(text):
            if _positive(text, m.start()):
                put("city", m.group(1))
    for m in _MOVED_TO.finditer(text):
        if not _by_someone_else(text, m.start()):
            put("city", m.group(1))
    for m in _CAR.finditer(text):
        put("car", m.group(1).split()[0])
    for m in (*_PARTNER_NAMED.finditer(text), *_DATING.finditer(text)):
        if m.group(1) not in _NOT_NAMES and _positive(text, m.start()):
            put("name:partner", m.group(1))
    if (broke := _BREAK_UP.search(text)) is not None and _positive(text, broke.start(broke.lastindex or 0)):
        put("name:partner", "(break-up)")
    for m in _SHIFT.finditer(text):
        if _positive(text, m.start()) and not _by_someone_else(text, m.start()):
            shift = (m.group(1) or m.group(2)).lower()
            put("shift", _SHIFT_NAMES.get(shift, shift))
    for m in _SCHOOL.finditer(text):
        put("school", m.group(1))
    for m in _HOMETOWN.finditer(text):
        put("hometown", next(g for g in m.groups() if g))
    for m in _JOB.finditer(text):
        if _positive(text, m.start()) and not _by_someone_else(text, m.start()):
            put("job", _job_value(m.group(1)))
            if (where := _IN_PLACE.match(text, m.end())) is not None:  # "a pharmacist in Leeds"
                put("city", where.group(1))
    for m in _RELATIVE_JOB.finditer(text):
        put(f"job:{m.group(1).lower()}", _job_value(m.group(2)))
    for m in _RELATIVE_CITY.finditer(text):
        put(f"city:{m.group(1).lower()}", m.group(2))
    for m in _JOB_VERB.finditer(text):
        if _positive(text, m.start()):
            put("job", f"{m.group(1).lower()} {m.group(2).lower()}")
    for pattern in _NEW_JOB:
        for m in pattern.finditer(text):
            if _positive(text, m.start()) and not _by_someone_else(text, m.start()) and not _named(text, m.start()):
                put("job", _job_value(next((g for g in reversed(m.groups()) if g), "a new job")))
    for m in _HIRED_ME.finditer(text):
        if m.group(1).lower() not in ("he", "she", "they", "nobody", "no one"):
            put("job", _job_value(m.group(1)))
    if _RETIRED.search(text):
        put("job", "retired")
    for m in _AGE.finditer(text):
        put("age", m.group(1))
    for m in _CLOCK.finditer(text):
        activity = _CLOCK_NAMES.get(m.group(1).lower(), m.group(1).lower())
        put(f"clock:{activity}", m.group(2).replace(" ", "").replace(".", ""))
    for m in _WEEKLY.finditer(text):
        put(f"weekly:{m.group(1).lower()}", m.group(2).lower())
    for slot, choices in _EITHER_OR:
        value = next((value for pattern, value in choices if pattern.search(text)), None)
        if value is not None:
            put(slot, value)
    for m in _EVENT.finditer(text):  # "my friend has an interview next month": the friend's
        who = someone_before(text, m.start())
        put(f"event:{m.group(1).lower()}" + (f":{who}" if who else ""), m.group(2))
    for m in _MAJOR.finditer(text):
        put("major", m.group(1))
    if _STUDENT.search(text) and "job" not in found:
        put("study_work", "student")
    return found
