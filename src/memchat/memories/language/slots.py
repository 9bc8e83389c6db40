"""Slots a statement fills: things a person has one value of at a time. Pure.

我住在上海 fills `city` with 上海; 我搬到杭州了 fills it with 杭州, so the second replaces the
first. A value the statement negates (别叫我阿杰) fills nothing. Values are sets: 其实我叫林晓，
叫我晓晓吧 names two.
"""

import re

from memchat.memories.language.cantonese import as_mandarin
from memchat.memories.language.diets import diet_plans
from memchat.memories.language.slots_en import read_slots_en

_CJK = "\u4e00-\u9fff"
_VALUE_END = r'(?=就好|就行|就可以|吧|好了|了|呀|哦|啦|的|[，。！!,.?？\s"”」』]|$)'
_NEGATED_BEFORE = re.compile(r"(?:别|不要|不想被|不再|不是|不在|不|没)$")

_WORD = rf"[{_CJK}A-Za-z0-9]"
_NAME = re.compile(
    rf"(?:我叫|叫我|我的名字(?:是|叫)|我名字叫|称呼我|喊我|我的昵称是)(?:做)?[\"“「『]?({_WORD}{{1,6}}?){_VALUE_END}"
)
_OWNED_NAME = re.compile(
    rf"(?:我的|我家的?|我|现在的|养了?(?:一|两)?[只条个]?)([{_CJK}]{{1,3}}?)(?:改名)?(?:叫|名叫|的名字是)"
    rf"({_WORD}{{1,6}}?){_VALUE_END}"
)
# whom one marries: 下个月我跟晓婷领证 / 嫁给了阿强
_MARRIES = re.compile(
    rf"(?:跟|和)(?![我他她])([{_CJK}]{{2,3}}?)(?:领证|结婚|订婚|办婚礼)"
    rf"|(?:嫁给了?|娶了)(?![我他她])([{_CJK}]{{2,3}}?){_VALUE_END}"
)
_HOMETOWN = re.compile(
    rf"(?:我是([{_CJK}]{{2,3}}?)人|老家(?:是|在)([{_CJK}]{{2,3}}?){_VALUE_END}|在([{_CJK}]{{2,3}}?)长大)"
)
_CITY = re.compile(
    rf"(?:(?:住在|住(?!院)|搬到了?|搬去了?|搬回了?|回(?![复答应家来去头国消微信电话短邮话])|定居在?|新(?:的)?城市是|新家在)([{_CJK}]{{2,3}}?)"
    rf"(?=(?:老城区|城区|市区|郊区|新区|市|区|县)?(?:工作|上班|生活|读书|上学|定居|住|了|[啦咯喽哦呀啊呢]?[，。！!,.~～]|[啦咯喽哦呀啊呢]?$))"
    rf"|(?<!现)(?<!正)在([{_CJK}]{{2,3}}?)(?=工作|上班|生活|读书|上学|定居|住))"
)
_CITY_DISTRICT = re.compile(
    rf"(?:住在|搬到了?|搬去了?|搬回了?|定居在)([{_CJK}]{{2,3}}?)(?=[{_CJK}]{{1,3}}(?:区|县|镇)|[{_CJK}]{{2}}[，。！!,.]|的)"
    rf"|(?<!现)(?<!正)在([{_CJK}]{{2,3}}?)(?=[{_CJK}]{{1,3}}(?:区|县)(?:工作|上班|生活|租房|住))"
    rf"|住(?![院了过得])([{_CJK}]{{2,3}}?)(?=[{_CJK}]{{1,3}}(?:区|县|镇)[，。！!,.]?)"  # 我现在住苏州工业园区
)
# the shift one works (上夜班, 白班, 大夜): not the early bus (赶早班地铁, 晚班车)
_SHIFT = re.compile(r"(?<![赶坐搭乘])([早中晚夜白])班(?![车机地公飞轮])|(大夜|小夜)")
_SHIFT_NAMES = {"大夜": "夜", "小夜": "晚"}
_NOT_PLACES = set("外面 家里 公司 学校 宿舍 路上 医院 这里 那里 哪里 老家 上班 工作 家 学习".split())
# a workplace where a city would be (我在银行上班, 在大厂上班, 在厂里干活): no city
_WORKPLACE_END = re.compile(r"(?:公司|厂|店|馆|院|所|行|局|企|中心|学|超市|餐厅|酒店|单位|工地|商场|里)$")
_TITLE = (
    r"(?:师|员|生|家|工|手|者|医生|护士|老板|会计|司机|律师|警察|模特|主播|博主|自由职业|店长|长|顾问|经理|主管|总监"
    r"|助理|主任|编辑|记者|策划|运营|销售|客服|专员|代表|秘书|老师|保安|保姆|月嫂|阿姨|骑手|外卖|快递|厨子|大夫|教练|中介"
    r"|经纪人|HR|hr)"
)
_JOB = re.compile(
    rf"(?:(?:我|现在)(?:现在)?(?:是|在)|工作是|职业是|我在做|我当|我做|我干|(?:我|现在)(?:现在)?在[{_CJK}]{{1,8}}?(?:当|做|干)"
    rf"|(?:去了|进了|跳槽到了?|跳到了?|换到了?)[{_CJK}A-Za-z]{{1,8}}?(?:当|做|干)|(?:升职|升|提拔)(?:当|做|成|为|到)了?)"
    rf"(?:一名|一个|个|一位|名)?([{_CJK}A-Za-z]{{0,6}}?{_TITLE})(?=了|呢|啦|[，。！!,.]|$)"
)
_WORKPLACE = re.compile(
    rf"(?:在([{_CJK}]{{2,3}}?)?|去了|进了|到)(?:一家|一所|一个|一间)([{_CJK}A-Za-z]{{0,6}}?"
    rf"(?:公司|厂|店|馆|院|所|行|局|中心|学校|小学|中学|大学|超市|餐厅|酒店|银行|医院|驾校|诊所|律所|外企|企业|机构|商场|工地|单位|房))"
    rf"(?=(当|做|干|上班|工作|打工|教)|[，。！!,.]|$)"
)
# sent to work in another city: 公司派我去武汉分部
_POSTED = re.compile(
    rf"(?:派我去|派我到|被派到|被派去|外派到|调到|调去)([{_CJK}]{{2,3}}?)(?=分部|分公司|分行|总部|工作|上班)"
)
# a new workplace told as the first day there: 去区税务局报到 / 入职了一家物流公司
_JOINED = re.compile(
    rf"(?:去|到)([{_CJK}]{{1,8}}?(?:局|院|所|公司|厂|店|馆|中心|学校|医院|银行|单位|集团|部门))(?:报到|报道|入职)"
    rf"|入职(?:了)?(?:一家|一个)?([{_CJK}]{{1,8}}?(?:局|院|所|公司|厂|店|馆|中心|学校|医院|银行|单位|集团))"
)
# the car one drives: 开的是一辆老捷达 / 提了辆比亚迪 / 新提了一台理想L6 (a value ending in 车 names no car: 新车,
# 电动车, 自行车)
_CAR = re.compile(
    rf"(?:开的是|开着|开)(?:一)?[辆台](?:[{_CJK}]{{1,4}}的)?(?:老|旧|新|二手)?([{_CJK}A-Za-z0-9]{{2,8}}?){_VALUE_END}"
    rf"|(?:(?:换了|提了|买了|入手了?|换成了?)(?:一)?辆|提了(?:一)?台)(?:新的|二手的?|新|老|旧)?"
    rf"([{_CJK}A-Za-z0-9]{{2,8}}?){_VALUE_END}"
)
# what a person eats as a rule: meat or no meat
_VEGETARIAN = re.compile(r"吃素|素食|不碰肉|戒肉|纯素|(?<!顿)(?<!天)不吃肉")
_MEAT = re.compile(
    r"无肉不欢|(?<!不)爱吃肉|(?<!不)喜欢吃肉|离不开肉|顿顿有肉|肉食动物"
    r"|(?:开始|重新|恢复|又)吃(?:点|些|一点)?(?:肉|荤|鸡|鱼|牛|猪)"
)
# whose city it is: 我儿子在深圳工作 is the son's, not the user's
_SOMEONE = re.compile(
    r"(儿子|女儿|闺女|孩子|老公|老婆|丈夫|妻子|爱人|爸爸?|妈妈?|父母|爸妈|哥哥?|姐姐?|弟弟?|妹妹?|男朋友|女朋友|对象|闺蜜|"
    r"朋友|同事|室友|舍友|同学|老板|爷爷|奶奶|外公|外婆|他|她|他们|她们)[^，。！!,.我]{0,4}$"
)
_AGE = re.compile(r"我(?:今年|现在)?(\d{1,3}|[一二三四五六七八九十]{1,3})(?:岁|(?=[，,。！!]|$))")
_DATE = r"(\d{1,2}月\d{1,2}[号日]|[一二三四五六七八九十]{1,3}月[一二三四五六七八九十]{1,3}[号日])"
_BIRTHDAY = re.compile(rf"(?:我的?生日是?|我的?生日在){_DATE}|{_DATE}是我的?生日")
_OTHER_BIRTHDAY = re.compile(rf"我([{_CJK}]{{1,3}}?)的?生日是?{_DATE}")
_CLOCK = re.compile(
    r"(\d{1,2}|[一二三四五六七八九十两]{1,3})点(半)?(?:多)?(?:就|才|都|左右)?(?:会)?(起床|起|睡觉|睡|下班|上班|吃饭|到家|吃早饭)"
)
_WEEKLY = re.compile(
    rf"(周[一二三四五六日天末]|星期[一二三四五六日天]|礼拜[一二三四五六日天])我?(?:都会?|会|都|一般|固定)?(?:去|在)([{_CJK}]{{2,5}}?)"
    rf"(?:(?=是)|{_VALUE_END})"  # 礼拜天去教堂是我的习惯: 教堂
)
_FAVOURITE = re.compile(
    rf"最喜欢的([{_CJK}]{{1,4}}?)是([{_CJK}A-Za-z0-9]{{1,8}}?){_VALUE_END}|([{_CJK}A-Za-z0-9]{{1,8}}?)是我最喜欢的([{_CJK}]{{1,4}}?){_VALUE_END}"
)
_LANGUAGE = re.compile(r"用(英文|英语|中文|汉语|普通话|日语|日文|韩语|粤语)")
_SHORT = re.compile(r"简短|简洁|短一点|短点|短一些|少说|精简|别太长|不要太长|不用太长|长话短说|一两句")
_LONG = re.compile(r"详细|长一点|多说点|多说一些|展开|具体一点|具体些|别太短|不要太短")
# 正式 of replies (正式一点, 用正式的语气, 回复要正式), not "officially" (正式搬到了天津, 正式在一起了)
_FORMAL = re.compile(
    r"(?<![不别么太])(?<!不用)正式(?:一点|一些|些|点|的?(?:语气|口吻|措辞|说法|用语|风格)|地(?:回|说|写|答))"
    r"|(?:语气|口吻|措辞|说话|回复|回答)[^，。,]{0,4}(?<![不别那么太])正式|礼貌一点|客气一点"
)
_CASUAL = re.compile(r"不用那么正式|别那么正式|不要那么正式|随意|随便点|轻松点|口语")
_SINGLE = re.compile(r"单身|没有对象|没对象|没有女朋友|没有男朋友|没女朋友|没男朋友|分手了|离婚了")
_TAKEN = re.compile(r"有女朋友了?|有男朋友了?|有对象了?|脱单|在一起了|结婚了|订婚了|确定(?:了)?关系|谈恋爱了|处对象了")
_EVENTS = "面试|考试|体检|手术|婚礼|答辩|旅行|出差|搬家|约会|聚会|演出|比赛|复查|考研|报到|入职|毕业"
_EVENT = re.compile(
    r"(今天|明天|后天|大后天|(?:下下|下|这|本)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天末]|(?:下个?月|这个?月|本月)?(?:月底|月初|\d{1,2}[号日])"
    rf"|\d{{1,2}}月\d{{1,2}}[号日])[^，。！!,.]{{0,8}}?({_EVENTS})|({_EVENTS})[^，。！!,.]{{0,4}}?(?:改到|在|是|定在)"
    r"(今天|明天|后天|(?:下下|下|这|本)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天末]|(?:下个?月)?\d{1,2}[号日])"
)
# a new partner (最近在跟一个叫何屿的男生约会, 跟小周在一起了, 现在在跟柏舟交往) and a break-up (我们俩上个月和平分了):
# both give `name:partner` a value, so the partner named before is replaced
_NEW_PARTNER = re.compile(
    rf"(?:跟|和)(?:一个)?叫({_WORD}{{1,4}}?)的(?:男生|女生|男孩|女孩|姑娘|小伙子?|男的|女的|人)(?:约会|在一起|谈|处)"
    rf"|(?:跟|和)(?![我他她一])([{_CJK}]{{2,3}}?)(?:约会|谈恋爱|在一起了|处对象)"
    rf"|在(?:跟|和)(?![我他她一])([{_CJK}]{{2,3}}?)交往"
)
_BREAK_UP = re.compile(
    r"(?:我们|俩|我(?:跟|和)[他她])[^，。！!,.]{0,6}?(?<!差点)(?<!快)(?<!要)(?:和平)?分(?:手)?了|(?<!差点)(?<!快)(?<!要)分手了"
)
# leaving a job, or a business of one's own: a new value of `job` (辞职了 / 开了家烘焙店); a shop that
# newly opened (楼下新开了一家面包店) is someone else's
_QUIT_JOB = re.compile(r"辞职|离职|辞了职|裸辞|不干了|被裁|失业了|退休了")
_OWN_BUSINESS = re.compile(
    rf"(?:(?<!新)开了?(?:一)?(?:家|个|间)|自己开)([{_CJK}]{{1,6}}?(?:店|馆|公司|工作室|餐厅|铺))"
)
# a weekly class or practice, the day before or after it (每周二晚上去上拳击课 / 拳击课改到每周四)
_WEEKLY_CLASS = re.compile(
    rf"(周[一二三四五六日天末]|星期[一二三四五六日天]|礼拜[一二三四五六日天])[^，。！!,.]{{0,8}}?(?:上|去|练|学)?"
    rf"([{_CJK}]{{1,4}}?(?:课|班|训练))|([{_CJK}]{{1,4}}?(?:课|班|训练))[^，。！!,.]{{0,6}}?"
    rf"(周[一二三四五六日天末]|星期[一二三四五六日天]|礼拜[一二三四五六日天])"
)
_SCHOOL = re.compile(
    rf"(?:我|现在)?(?:在|考上了?|考进了?|转到了?|目标是|改考|报考)([{_CJK}]{{1,6}}?(?:大学|学院|大|中学|高中|小学))"
    r"(?:读|上|念|了|的|[，。！!,.]|$)"
)
_MAJOR = re.compile(
    rf"(?:专业是|读的是|学的是|主修|改学|开始读|在读[{_CJK}]{{2,6}}?的|转了?专业了?[，,]?(?:现在)?(?:读|学)|转到了?|转去了?)"
    rf"(?![大研高初博小])([{_CJK}]{{2,6}}?)(?:专业|系)?(?=[，。！!,.]|$)"
    rf"|(?:读|学)(?![大研高初博小])([{_CJK}]{{2,6}}?)专业"
)
_STUDENT = re.compile(r"在读|读研|读博|读大学|上大学|在上学|是学生|是大学生|是研究生")
_WORKING = re.compile(r"毕业了|上班了|工作了|在上班|入职了|参加工作")
_PARTNERS = {
    "女朋友": "partner",
    "男朋友": "partner",
    "对象": "partner",
    "女友": "partner",
    "男友": "partner",
    "老婆": "partner",
    "老公": "partner",
    "爱人": "partner",
}
_LANGUAGE_NAMES = {"英语": "英文", "汉语": "中文", "普通话": "中文", "日文": "日语"}
_CLOCK_NAMES = {"起": "起床", "睡": "睡觉", "吃早饭": "吃饭"}


def _someone_before(text: str, start: int) -> str | None:
    """Whom the few characters before `start` name, when someone else (我儿子在深圳工作: 儿子)."""
    someone = _SOMEONE.search(text[max(0, start - 8) : start])
    return someone.group(1) if someone else None


def _whose(slot: str, text: str, start: int) -> str:
    """The slot's key for a value at `start`: `slot`, or `slot:儿子` when the few characters before
    it name someone else (我儿子在深圳工作 is the son's city, not the user's)."""
    someone = _someone_before(text, start)
    return f"{slot}:{someone}" if someone else slot


def _positive(text: str, start: int) -> bool:
    return not _NEGATED_BEFORE.search(text[max(0, start - 3) : start])


# slots with two values; when both patterns match, the first one wins
_EITHER_OR: tuple[tuple[str, tuple[tuple[re.Pattern[str], str], ...]], ...] = (
    ("reply_length", ((_LONG, "long"), (_SHORT, "short"))),
    ("tone", ((_CASUAL, "casual"), (_FORMAL, "formal"))),
    ("study_work", ((_WORKING, "working"), (_STUDENT, "student"))),
    ("relationship_status", ((_SINGLE, "single"), (_TAKEN, "taken"))),
    ("diet", ((_MEAT, "meat"), (_VEGETARIAN, "vegetarian"))),
)


def read_slots(text: str) -> tuple[dict[str, frozenset[str]], str]:
    """The slots `text` fills (slot -> values), and the text left for comparing content."""
    found: dict[str, set[str]] = {}

    def put(key: str, value: str) -> None:
        found.setdefault(key, set()).add(value)

    text = as_mandarin(text)
    rest = text
    for m in _HOMETOWN.finditer(text):
        put("hometown", next(g for g in m.groups() if g))
        rest = rest.replace(m.group(0), " ")
    for m in _OWNED_NAME.finditer(rest):
        owner = m.group(1)
        if owner not in ("叫", "名字") and _positive(rest, m.start()):
            put(f"name:{_PARTNERS.get(owner, owner)}", m.group(2))
    for m in _NAME.finditer(rest):
        if _positive(rest, m.start()):
            put("name", m.group(1))
    for m in (*_CITY.finditer(rest), *_CITY_DISTRICT.finditer(rest)):
        place = next((g for g in m.groups() if g), None)
        workplace = place is not None and _WORKPLACE_END.search(place) is not None
        if place is not None and place not in _NOT_PLACES and not workplace and _positive(rest, m.start()):
            put(_whose("city", rest, m.start()), place)
    for m in _CAR.finditer(rest):
        car = m.group(1) or m.group(2)
        if not car.endswith("车"):
            put(_whose("car", rest, m.start()), car)
    for m in _JOB.finditer(rest):
        put(_whose("job", rest, m.start()), m.group(1))
    for m in _SHIFT.finditer(rest):
        if _positive(rest, m.start()):
            shift = m.group(1) or m.group(2)
            put(_whose("shift", rest, m.start()), _SHIFT_NAMES.get(shift, shift))
    for m in _WORKPLACE.finditer(rest):
        put(_whose("job", rest, m.start()), m.group(2))
        if m.group(1) and m.group(3) and m.group(1) not in _NOT_PLACES:  # 在长沙一家广告公司上班: the city too
            put(_whose("city", rest, m.start()), m.group(1))
    for m in _POSTED.finditer(rest):
        put("city", m.group(1))
    for m in _JOINED.finditer(rest):
        put(_whose("job", rest, m.start()), m.group(1) or m.group(2))
    for m in _MARRIES.finditer(rest):
        put("name:partner", m.group(1) or m.group(2))
    for m in _NEW_PARTNER.finditer(rest):
        if _positive(rest, m.start()):
            put("name:partner", next(g for g in m.groups() if g))
    if (broke := _BREAK_UP.search(rest)) is not None and _someone_before(rest, broke.start()) is None:
        put("name:partner", "分手")
    for m in _MAJOR.finditer(rest):
        put("major", m.group(1) or m.group(2))
    for m in _AGE.finditer(rest):
        put("age", m.group(1))
    for m in _BIRTHDAY.finditer(rest):
        put("birthday", m.group(1) or m.group(2))
    for m in _OTHER_BIRTHDAY.finditer(rest):
        put(f"birthday:{m.group(1)}", m.group(2))
    for m in _CLOCK.finditer(rest):
        activity = _CLOCK_NAMES.get(m.group(3), m.group(3))
        put(f"clock:{activity}", m.group(1) + (m.group(2) or ""))
    if quit_job := _QUIT_JOB.search(rest):
        put(_whose("job", rest, quit_job.start()), "离职")  # 我老公辞职了: his job
    for m in _OWN_BUSINESS.finditer(rest):
        put(_whose("job", rest, m.start()), "开" + m.group(1))  # 我哥在常州开了家五金店: his
    for m in _WEEKLY_CLASS.finditer(rest):
        day, activity = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        activity = activity[-3:].lstrip("上去练学")  # 以后拳击课 / 去上拳击课: 拳击课
        put(f"weekly:{activity}", re.sub(r"^(星期|礼拜)", "周", day).replace("周天", "周日"))
    for m in _SCHOOL.finditer(rest):
        put("school", m.group(1))
    for m in _WEEKLY.finditer(rest):
        day = re.sub(r"^(星期|礼拜)", "周", m.group(1)).replace("周天", "周日")
        put(f"weekly:{m.group(2)}", day)
    for m in _FAVOURITE.finditer(rest):
        kind, value = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        put(f"favourite:{kind}", value)
    if language := _LANGUAGE.search(rest):
        put("reply_language", _LANGUAGE_NAMES.get(language.group(1), language.group(1)))
    for slot, choices in _EITHER_OR:
        value = next((value for pattern, value in choices if pattern.search(rest)), None)
        if value is not None:
            put(slot, value)
    for m in _EVENT.finditer(rest):
        day, event = (m.group(1), m.group(2)) if m.group(2) else (m.group(4), m.group(3))
        put(_whose(f"event:{event}", rest, m.start()), day)  # 我朋友下周三面试: the friend's
    for key, values in diet_plans(text).items():
        found.setdefault(key, set()).update(values)
    if re.search(r"[A-Za-z]", text):  # English, or English words in a Chinese message
        for key, values in read_slots_en(text).items():
            found.setdefault(key, set()).update(values)
    return {k: frozenset(v) for k, v in found.items()}, rest
