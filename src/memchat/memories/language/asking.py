"""A message that asks for something now: a question, a request for help with the task at hand.

Such a message is what a turn is for, not something to remember about the user (LABELS.md:
怎么写请假条比较正式？, 推荐几部轻松点的电影呗, "any chill phone games?"). The remember-or-not
classifier keeps a few of them, mostly as conversation style, because a request says how an answer
should be (正式, 轻松). A request that says how replies should be from now on (以后回答简短一点,
"can you stop using emoji?"), what the assistant must not bring up, or what to call someone stays:
those are the style and the boundaries the user wants remembered.
"""

import re

# a request where a sentence begins: asking for an answer, a suggestion, some help
_REQUEST = re.compile(
    r"^(?:那|哎|诶|欸|唉|对了|话说)?[，,]?(?:你)?(?:帮我|给我|推荐|有没有|有啥|有什么|怎么|如何|你觉得|你说|要不要)"
    r"|^(?:any|what|what's|which|how|where|who|is there|are there|do you|does|should i|can you|could you|"
    r"would you|got any)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"[？?][~～！!。.…]*\s*$")
_CLAUSE = re.compile(r"[，,；;：:]")
# a clause about the user: a fact said beside the question (我对芒果过敏，有什么水果推荐吗？) is kept
_ABOUT_ME = re.compile(r"我|\b(?:i|i'm|i've|my|me|we|our)\b", re.IGNORECASE)
# what makes a request lasting: from now on, how replies sound, what not to bring up, what to call
# someone, something to keep
_LASTING = re.compile(
    r"以后|之后|今后|每次|平时|总是|一直|永远|别(?![人的处])|(?<!要)不要|不许|少用|多用|叫我|叫你|称呼|喊我|回复|回答|回我|说话|语气|口吻|"
    r"跟我说|和我说|对我|提醒我|记一下|记住|记得|的时候|时[，,]|建议要|给我的建议|给我建议|提|问我|格式|表情"
    r"|\b(?:from now on|always|never|don't|do not|stop|anymore|call me|remember|remind me|reply|replies|answer|"
    r"answers|respond|talk|tone|emoji|bring up|mention|keep\b.+\bout|when i|whenever|up to me)\b",
    re.IGNORECASE,
)
# "…is up to me, ok?": a statement to be agreed with, not a question
_TAG = re.compile(r"(?:^|[\s,，])(?:ok|okay|alright|right|k)\s*[？?]\s*$", re.IGNORECASE)


def asks_now(text: str) -> bool:
    """Whether a sentence asks for something in the moment, with nothing in it to remember: its
    first clause asks (a request word where it begins, or the question mark of a one-clause
    sentence), no later clause is about the user, and nothing in it is meant to last."""
    text = text.strip()
    if _TAG.search(text) or _LASTING.search(text):
        return False
    first, *rest = [c for c in _CLAUSE.split(text) if c.strip()] or [text]
    if any(_ABOUT_ME.search(clause) for clause in rest):
        return False
    return bool(_REQUEST.search(first.strip())) or (not rest and bool(_QUESTION.search(text)))
