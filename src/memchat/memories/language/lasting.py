"""Plain statements of lasting personal facts that fill no slot: a pet one has, a condition of the
body, a relative's work or home, the vehicle one owns. Pure.

The remember-or-not classifier has seen few of them and leaves many near its line ("I have a cat
named Pickles": nothing 0.43, fact 0.41; 我妈在菜场里卖干货: nothing 0.55). They are not slots: a
second pet or a second condition is added, not a change of the first, so they only keep a sentence
the classifier would drop (`extraction/embeddings.py`), and play no part in changes of mind.
"""

import re

_CJK = "\u4e00-\u9fff"
_PETS_ZH = (
    "狗|猫|金毛|柯基|泰迪|哈士奇|柴犬|边牧|拉布拉多|比熊|博美|鹦鹉|玄凤|八哥|乌龟|仓鼠|兔子|金鱼|鱼|橘猫|布偶|英短|蓝猫"
)
_CONDITIONS_ZH = (
    "散光|近视|远视|高血压|糖尿病|哮喘|痛风|甲减|甲亢|胃病|鼻炎|色盲|色弱|贫血|低血糖|心脏病|早搏|腰椎间盘突出|颈椎病|"
    "偏头痛|抑郁症|焦虑症|癫痫|湿疹|荨麻疹|耳背|弱视|乳糖不耐"
)
_RELATIVES_ZH = (
    "妈妈?|爸爸?|哥哥?|姐姐?|弟弟?|妹妹?|老公|老婆|儿子|女儿|外婆|外公|奶奶|爷爷|姥姥|姥爷|爸妈|父母|公公|婆婆"
)
_LASTING_ZH = (
    # 家里有条金毛 / 我养了两只猫
    re.compile(rf"(?:养了?|有)(?:一|两|三|几)?(?:条|只|个)[{_CJK}]{{0,4}}?(?:{_PETS_ZH})"),
    # 左眼还有点散光 / 我有高血压 (not 没有近视)
    re.compile(rf"(?<![没不])(?:有|有点|得了|患有|查出|确诊)[{_CJK}]{{0,3}}?(?:{_CONDITIONS_ZH})"),
    # 我妈在菜场里卖干货 / 我爸在工地上开塔吊 / 我姐在深圳上班 (not 我妈在厨房做饭)
    re.compile(
        rf"(?:{_RELATIVES_ZH})[^，。！!,.？?我]{{0,3}}?在[{_CJK}]{{1,8}}?(?:里|上)?(?:卖|开|当|教|上班|工作|打工|摆摊|种)"
    ),
    # 我左耳听力不太好 / 右耳有点背 (the hearing of one's own ear, not a passing 眼睛不舒服)
    re.compile(r"(?:左耳|右耳|耳朵|一只耳)[^，。！!,.]{0,3}?(?:听力(?:一直)?(?:不太|不大|不)好|有点背|背)"),
    # 外婆眼睛不太好 / 我爸腿脚不方便
    re.compile(rf"(?:{_RELATIVES_ZH})的?(?:眼睛|耳朵|腿脚?|腰|心脏|身体)(?:一直|不太|不大|不)(?:好|方便|灵)"),
)

_PETS_EN = (
    r"dogs?|cats?|puppy|puppies|kittens?|birds?|hamsters?|rabbits?|bunny|bunnies|parrots?|turtles?|tortoises?|"
    r"horses?|goldfish|fish|snakes?|geckos?|lizards?|ferrets?|guinea pigs?|cockatiels?|tabby|beagle|terrier|"
    r"retriever|husky|poodle|corgi|chihuahua"
)
_CONDITIONS_EN = (
    r"asthma|diabetes|type [12] diabetes|a heart murmur|heart murmur|epilepsy|migraines|adhd|celiac|crohn's|lupus|"
    r"arthritis|high blood pressure|colou?r-?blind|nearsighted|near-sighted|farsighted|hard of hearing|"
    r"deaf in one ear|a pacemaker|sleep apnea|ibs|tinnitus|scoliosis|a bad knee|a bad back|psoriasis|eczema|"
    r"anemia|anaemia|gout|a thyroid condition|hypothyroidism|multiple sclerosis|pcos|endometriosis"
)
_RELATIVES_EN = (
    r"mom|mother|dad|father|son|daughter|brother|sister|wife|husband|grandma|grandpa|grandmother|grandfather|"
    r"aunt|uncle|cousin|parents|kids?|boyfriend|girlfriend|partner|stepdad|stepmom|nephew|niece"
)
_LASTING_EN = (
    # "I have a cat named Pickles" / "we've got two dogs" / "My tabby Olive runs the house"
    re.compile(
        rf"\b(?:i|we)\s*(?:have|'ve got|have got|got|adopted|own)\s+(?:an?|two|three|four|\d)\s+(?:\w+\s+){{0,2}}?"
        rf"(?:{_PETS_EN})\b|\b(?:my|our)\s+(?:\w+\s+)?(?:{_PETS_EN})\s+(?-i:[A-Z][a-z]+)\b",
        re.IGNORECASE,
    ),
    # "I have a heart murmur" / "Also colorblind, red-green" / "Pretty nearsighted"
    re.compile(
        rf"(?:\b(?:i|i've|i'm|i am)\s+(?:also\s+)?(?:have|got|'ve got|have got|been diagnosed with|diagnosed with)?\s*"
        rf"|^(?:also|pretty|very|really|kinda|totally|a bit)?[\s,]*)(?:(?:mild|bad|severe|chronic)\s+)?"
        rf"(?:{_CONDITIONS_EN})\b",
        re.IGNORECASE,
    ),
    # "My mom sells dried goods at the market" / "My son does speech and debate" / "My grandma just turned 94"
    re.compile(
        rf"\bmy\s+(?:older\s+|younger\s+|little\s+|big\s+|oldest\s+|youngest\s+)?(?:{_RELATIVES_EN})\s+"
        rf"(?:just\s+|still\s+|recently\s+)?(?:works|lives|moved|runs|owns|teaches|drives|sells|does|plays|"
        rf"turned \d+|is in (?:college|high school|middle school|kindergarten|grade))\b",
        re.IGNORECASE,
    ),
    # "My car is a blue Mazda 3" / "my truck's a 2009 F-150"
    re.compile(r"\bmy\s+(?:car|truck|ride|suv|van|motorcycle|motorbike)(?:\s+is|'s)\s+an?\s+", re.IGNORECASE),
)
_NEGATED_EN = re.compile(r"\b(?:don't|do not|doesn't|never|no longer|not)\b[^.!?]{0,12}$", re.IGNORECASE)


def lasting_fact(text: str) -> bool:
    """Whether `text` plainly says a lasting fact of the user's life or family that fills no slot."""
    for pattern in _LASTING_ZH:
        if pattern.search(text):
            return True
    for pattern in _LASTING_EN:
        m = pattern.search(text)
        if m is not None and not _NEGATED_EN.search(text[: m.start()]):
            return True
    return False
