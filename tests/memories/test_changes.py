"""Changes of mind, paraphrases and compatible facts; slots, event dates and clean content (pure functions)."""

from datetime import UTC, date, datetime

import pytest

from memchat.memories.extraction.changes import Changes, supersedes_for_update
from memchat.memories.extraction.dropped import revisions
from memchat.memories.language.conflicts import COMPATIBLE, CONTRADICTS, SAME, analyse, relation
from memchat.memories.language.content import clean_content
from memchat.memories.language.dates import resolve_event_date
from memchat.memories.language.slots import read_slots
from memchat.memories.types import MemoryDraft, StoredMemory

# Thursday 2026-12-03, 14:00 in Shanghai
THURSDAY_MS = int(datetime(2026, 12, 3, 6, 0, tzinfo=UTC).timestamp() * 1000)


def _relation(old: str, new: str) -> str:
    return relation(analyse(new), analyse(old))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我喜欢喝咖啡。", "我现在不喜欢喝咖啡了，改喝茶。"),
        ("我叫小林。", "其实我叫林晓，以后叫我晓晓吧。"),
        ("我住在上海。", "我搬到杭州了。"),
        ("回复简短一点。", "以后回复可以详细一点。"),
        ("我每天七点起床。", "我现在每天六点就起床了。"),
        ("我下周三面试。", "面试改到下周五了。"),
        ("叫我阿杰就好。", "别叫我阿杰了，叫我杰哥。"),
        ("我单身。", "我有女朋友了。"),
        ("用英文回复我。", "改成用中文回复我吧。"),
        ("我的猫叫团子。", "我的猫改名叫汤圆了。"),
        ("我住在苏州。", "我们全家搬到无锡了，孩子上学也方便。"),  # the 也 is about school, not the city
        ("I live in Austin.", "We moved to Denver, and the rent is lower too."),
        ("我住在开封老城区。", "现在住在厦门了。"),  # a city with its district
        ("我开的是一辆老桑塔纳。", "换了辆吉利星越，油耗也低。"),
        ("I put a lot of miles on my old Honda.", "I picked up a used Mazda last week."),
        ("我家住在武汉光谷，上班很近。", "我们一家搬去了长沙。"),  # a district without 区
        ("我们住在宁波的老小区里。", "去年全家搬到了苏州。"),
        ("我在一家快递公司做分拣。", "今年开始在一家医院做护工。"),  # the workplace names the job
        ("我在一家外贸公司当跟单员。", "过完年去了一家书店，做店员。"),
        ("我女朋友叫小美。", "下个月我就跟阿兰领证了。"),  # whom one marries
        ("我男朋友叫阿成。", "我们分了，现在的对象叫大伟。"),
        ('同事都叫我"豆芽"。', '现在同事都喊我"铁塔"。'),  # a nickname in quotes
        ("我在读南开的历史学，大三。", "我转专业了，现在读金融学。"),
        ("我在合肥一家设计公司上班。", "公司派我去南京分公司了。"),  # the city of the workplace, then a posting
        ("I'm a junior studying chemistry.", "I switched my major to economics."),
        ("We rent an apartment in Fresno.", "We bought a little house in Modesto this spring."),  # where home is
        ("My teammates call me Ace.", "Since the tournament the team calls me Lucky."),  # what others call one
        ("My friends call me Bear.", "I go by Ray now."),
        ("I live in Austin.", "Finally unpacked the last boxes at our new place in Portland."),  # a new home's city
        ("I rent a studio in Queens.", "Signed a lease on a two-bedroom in Jersey City."),
        ("我住在杭州滨江。", "上个月搬家了，我现在住苏州工业园区。"),  # 住 without 在, before a district
        ("I work the day shift at the warehouse.", "They moved me to nights, 10pm to 6am."),  # the shift one works
        ("I work nights at a gas station.", "They put me on days now, 7 to 7."),
        ("我上的是早班，早上六点到下午两点。", "这周开始排的是中班。"),
        ("我是夜班保安。", "队长给我换成白班了。"),
        ("我男朋友叫阿杰，是个健身教练。", "我们俩上个月和平分了，最近在跟一个叫何屿的男生约会。"),  # a new partner
        ("我女朋友叫小雨。", "我跟小周在一起了。"),
        ("My girlfriend Naomi works at the club too.", "We ended things last month, no drama."),  # a break-up
        ("My boyfriend Sam is a chef.", "I'm dating a guy named Theo now."),
        ("I drive a 2009 Volvo wagon.", "I traded it in for a used Prius."),  # the car one traded for
        ("我开的是一辆五菱宏光。", "老车卖给我徒弟了，新提了一台理想L6。"),  # 提车: a car, whatever its measure word
        ("我男朋友叫阿哲。", "跟之前那个分了，现在在跟柏舟交往。"),  # 在跟 X 交往: a new partner
        ("我吃素三年了。", "体检说贫血，最近又吃肉了。"),  # meat again
        ("I'm pescatarian, have been for years.", "My doctor pushed me and I started eating chicken again."),
        ("我吃素两年了。", "医生让我补蛋白，我又开始吃鸡胸肉和鱼了。"),  # meat named by what it is
        ("我单身好几年了。", "我和相亲认识的那个男生确定关系了！"),  # single, then with someone
        ("I'm single and not looking.", "Update: I've been seeing someone, she's a vet tech."),
        ("I'm single.", "I started dating a guy from my climbing gym."),
        ("I work as a cashier at Target.", "Got bumped up to shift lead last week!"),  # a promotion
        ("我在奶茶店当店员。", "我升职当店长了！"),
        ("我在公司做销售。", "上个月被提拔成主管了。"),
        ("我喺广州做嘢，做紧平面设计。", "我搬咗去香港啦，喺度搵咗份新工。"),  # Cantonese, read as Mandarin
        ("我在成都上班。", "我搬到重庆啦！"),  # a particle after the city is not the city's
        ("我住在南昌。", "搬家搬得累死了，新城市是长沙，楼下全是小吃。"),
        ("我在吃生酮，一点碳水都不碰。", "之前那套太难坚持了，我最近改成地中海饮食。"),  # a way of eating
        ("I'm doing intermittent fasting, nothing before noon.", "I've switched to a plain high-protein plan."),
        ("I'm on keto.", "Gave up on keto, doing the Mediterranean diet now."),
    ],
)
def test_changes_of_mind_contradict(old: str, new: str) -> None:
    assert _relation(old, new) == CONTRADICTS


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我喜欢猫。", "我也喜欢狗。"),
        ("我喜欢吃鱼。", "我喜欢钓鱼。"),
        ("我的猫叫团子。", "我的狗叫旺财。"),
        ("我住在上海。", "我老家在湖南。"),
        ("我下周三面试。", "我下周五体检。"),
        ("别叫我宝贝。", "别问我工资多少。"),
        ("我叫小林。", "我女朋友叫小雨。"),
        ("我住在苏州。", "我也在杭州住过两年。"),  # the 也 is in the clause that names the city
        ("I live in Austin.", "I moved to Denver too."),
        ("我开的是一辆老桑塔纳。", "我老婆开的是一辆宝马。"),  # her car, not mine
        ("我开的是一辆桑塔纳。", "我买了辆自行车。"),  # a bicycle is no car
        ("我开的是一辆桑塔纳。", "新买了一台洗衣机。"),  # 台 is a car only after 提了
        ("我男朋友叫阿哲。", "我和同事交往不多。"),  # 交往 with colleagues is no partner
        ("我在一家快递公司做分拣。", "我妈在一家医院当护工。"),  # her workplace, not mine
        ("住院三天了，天天输液。", "我住在青岛。"),  # 住院 names no city
        ("My cousin is studying nursing in Ohio.", "I'm studying history."),  # the cousin's major
        ("My name is Margaret.", "Everybody calls me Peggy."),  # a nickname beside the name
        ("I live in Tulsa.", "My sister bought a house in Denver."),  # her home, not mine
        ("我住在青岛。", "出差这几天我住酒店里面，还挺干净。"),  # a hotel is no city
        ("我上夜班。", "我老公上白班。"),  # his shift, not mine
        ("My boyfriend Sam is a chef.", "We never broke up, despite the long distance."),
        ("我上夜班。", "每天早上得赶早班地铁回家。"),  # the early train is no shift
        ("我有肾结石，前年疼得在地上打滚。", "那次疼起来直冒冷汗，到现在想起来还后怕。"),  # 到现在: nothing changed
        ("I work as a paralegal during the week.", "I bartend at a brewery for extra cash."),  # a job on the side
        ("我在超市当收银员。", "周末搞点副业，做家教。"),
        ("我在一家奶茶店打工。", "我老公上个月辞职了。"),  # his job, not mine
        ("我不吃辣。", "我最近开始吃鸡胸肉减脂。"),  # meat beside a taste: no diet changed
        ("我是麻醉科医生。", "楼下新开了一家面包店，闻着好香。"),  # a shop that opened is nobody's job here
        ("我在银行做柜员。", "我哥在常州开了家五金店。"),  # his shop, not mine
        ("我在银行上班。", "我住在上海。"),  # a bank is a workplace, no city
        ("我在吃生酮。", "我同事在搞十六加八轻断食，中午之前什么都不吃。"),  # her way of eating
        ("I got a final-round interview next Wednesday.", "My friend has an interview next month."),  # the friend's
        ("我下周三面试。", "我朋友下周五面试，比我淡定多了。"),
        ("I'm doing intermittent fasting.", "My coworker is doing keto and she's miserable."),
        ("I'm on keto.", "I'm also trying intermittent fasting."),  # also: one beside the other
    ],
)
def test_compatible_facts_stay_apart(old: str, new: str) -> None:
    assert _relation(old, new) == COMPATIBLE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我喜欢猫。", "我很喜欢猫咪。"),
        ("我不吃辣。", "我吃不了辣。"),
        ("回复简短一点。", "说话简洁些，别太长。"),
        ("我住在上海。", "我现在住上海。"),
        ("我的猫叫团子。", "我养了一只猫叫团子。"),
        ("我女朋友叫小雨。", "我对象叫小雨。"),
        ("用户喜欢猫", "用户很喜欢猫咪"),  # the LLM's third person reads as the first
        ("我在一家银行当柜员。", "我是银行的柜员。"),  # one job, its words cut at other lengths
    ],
)
def test_paraphrases_are_the_same(old: str, new: str) -> None:
    assert _relation(old, new) == SAME


def test_slots_ignore_negated_values() -> None:
    assert read_slots("别叫我阿杰了，叫我杰哥。")[0] == {"name": frozenset({"杰哥"})}
    assert read_slots("我已经不在北京了，回成都工作了。")[0]["city"] == frozenset({"成都"})


def test_similarity_joins_statements_with_little_shared_wording() -> None:
    old, new = analyse("我想多陪陪她。"), analyse("我希望能多花时间陪她。")
    assert relation(new, old) == COMPATIBLE
    assert relation(new, old, similarity=0.9) == SAME


def test_update_that_changes_the_mind_supersedes() -> None:
    coffee = StoredMemory("m1", "preference", "用户喜欢喝咖啡", 3)
    assert supersedes_for_update("用户不再喜欢喝咖啡，改喝茶", coffee)
    assert not supersedes_for_update("用户喜欢喝咖啡，尤其是拿铁", coffee)


def test_a_revision_the_classifier_missed_is_kept_with_the_type_it_changes() -> None:
    known = [StoredMemory("m1", "preference", "我喜欢喝咖啡。", 3)]
    [kept] = revisions("今天好累。我现在不喝咖啡了。", [], known)
    assert kept == MemoryDraft("preference", "我现在不喝咖啡了。", 3)
    assert revisions("今天好累。", [], known) == []


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("我下周三面试", date(2026, 12, 9)),
        ("我明天要出差", date(2026, 12, 4)),
        ("月底搬家", date(2026, 12, 31)),
        ("下个月5号考试", date(2027, 1, 5)),
        ("1月5号回老家", date(2027, 1, 5)),
        ("我周二去体检", date(2026, 12, 8)),  # a bare weekday already past this week is next week's
        ("我这周五体检", date(2026, 12, 4)),
        ("我每周六去爬山", None),  # a habit, not an event
        ("我女朋友在东莞上班，我们周末才能见一面。", None),  # 周末 as a habit
        ("周六一般在家带娃", None),
        ("we did a 40 mile ride together on saturday", date(2026, 11, 28)),  # told as done: the last one
        ("I went to my cousin's wedding on Sunday", date(2026, 11, 29)),
        ("I'm getting LASIK on the 8th, finally saying goodbye to my glasses", date(2026, 12, 8)),
        ("My interview is next Wednesday", date(2026, 12, 9)),  # as 下周三
        ("The surgery is on Tuesday", date(2026, 12, 8)),
        ("We fly out tomorrow morning", date(2026, 12, 4)),
        ("My sister's wedding is January 5th", date(2027, 1, 5)),  # said in December: next year's
        ("the 20th of December is our anniversary", date(2026, 12, 20)),
        ("My exam is in two weeks", date(2026, 12, 17)),
        ("Rent is due at the end of the month", date(2026, 12, 31)),
        ("I have yoga every Tuesday", None),  # habits, not events
        ("I work Tuesdays at the shop", None),
        ("I moved here three weeks ago", None),
        ("I'm a night owl, rarely asleep before 2", None),
        ("我的猫叫团子", None),
        ("我在奶茶店打工，一周四天。", None),  # how often, not a Thursday
        ("我每周三次去游泳", None),
        ("我每天坐地铁二号线上班", None),  # a line, not the 2nd
        ("我住3号楼", None),
        ("Had to push the dentist to the 22nd, work conflict.", date(2026, 12, 22)),
    ],
)
def test_event_dates_resolve_from_when_it_was_said(text: str, day: date | None) -> None:
    assert resolve_event_date(text, THURSDAY_MS) == day


def test_the_timezone_decides_the_day() -> None:
    late_evening_utc = int(datetime(2026, 12, 3, 20, 0, tzinfo=UTC).timestamp() * 1000)  # Friday 04:00 in Shanghai
    assert resolve_event_date("明天", late_evening_utc, "Asia/Shanghai") == date(2026, 12, 5)
    assert resolve_event_date("明天", late_evening_utc, "UTC") == date(2026, 12, 4)


def test_only_facts_get_an_event_date() -> None:
    changes = Changes(said_at_ms=THURSDAY_MS)
    assert changes.event_date("fact", "我下周三面试") == "2026-12-09"
    assert changes.event_date("preference", "我下周三想吃火锅") is None


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("记住我周末喜欢爬山", "我周末喜欢爬山"),
        ("帮我记一下，我对花生过敏。", "我对花生过敏。"),
        ("对了，以后不要在半夜给我发消息。", "不要在半夜给我发消息。"),
        ("我喜欢猫，记住了吗？", "我喜欢猫"),
        ("跟你说一声，我现在的对象是小邓。", "我现在的对象是小邓。"),  # not "一声，我现在的…"
        ("告诉你一下，我换工作了。", "我换工作了。"),
        ("猫前阵子送给我表姐了，她家有院子；", "猫前阵子送给我表姐了，她家有院子"),  # a sentence cut at ；
        ("以后的事以后再说。", "以后的事以后再说。"),
        ("记住", None),
        ("  ", None),
        ("remember that I'm vegan.", "I'm vegan."),
        ("btw, from now on call me Sam", "call me Sam"),
        ("I'm allergic to peanuts, remember that?", "I'm allergic to peanuts"),
        ("I'm doing ok", "I'm doing ok"),  # a trailing word is taken off only after a comma or stop
        ("something to remember", "something to remember"),
        ("Remember", None),
    ],
)
def test_content_drops_commands_and_filler(text: str, content: str | None) -> None:
    assert clean_content(text) == content


def test_content_is_capped() -> None:
    assert len(clean_content("记住" + "我喜欢猫" * 200) or "") == 500


def test_a_statement_naming_only_what_the_memory_named_repeats_it() -> None:
    from memchat.memories.extraction.changes import _names_only_repeated, read_pair, statement

    def repeats(old: str, new: str) -> bool:
        return _names_only_repeated(statement(new), read_pair(None, statement(new), None, old, None, None))

    assert repeats("Radiohead is my favorite band.", "Nobody beats Radiohead for me, all-time fave.")
    assert not repeats("I drive a Civic", "Sold the Civic, I'm driving a Tesla")  # a new name
    assert not repeats("Radiohead is my favorite band.", "Radiohead isn't my favorite band anymore")  # negated
    assert not repeats("I'm 29", "I turned 30 last week")  # a new number
    assert not repeats("I love hiking", "hiking every weekend lately")  # no name: the classifier decides


@pytest.mark.parametrize(
    ("text", "partner"),
    [
        ("我们俩上个月和平分了。", {"分手"}),
        ("我闺蜜跟她男朋友分手了。", None),  # her break-up
        ("我们吵架了，差点分手了。", None),  # nearly
        ("We ended things last month. Now I'm seeing Beatriz.", {"(break-up)", "beatriz"}),
        ("I'm seeing someone now, her name is Ines, she teaches piano.", {"ines"}),
        ("I've been seeing a guy, his name's Omar.", {"omar"}),
        ("I'm seeing a therapist now.", None),
        ("My sister and her husband broke up.", None),
        ("We never broke up.", None),
    ],
)
def test_a_break_up_and_a_new_partner_fill_the_partner_slot(text: str, partner: set[str] | None) -> None:
    assert read_slots(text)[0].get("name:partner") == (frozenset(partner) if partner else None)


@pytest.mark.parametrize(
    ("text", "also"),
    [
        ("I have a cat too.", True),
        ("Me too, honestly", True),
        ("Plus I coach my son's soccer team.", True),
        ("I run, and plus I swim on Sundays.", True),
        ("That place got way too crowded, so I moved to the YMCA.", False),
        ("Rolled my ankle one too many times.", False),
        ("Got bumped to shift lead, it's $23.50 plus overtime.", False),
        ("我现在睡前改喝一杯热牛奶，倒也能睡着。", False),  # 倒也: "still, it works"
        ("我周末也去爬山。", True),
    ],
)
def test_too_and_plus_add_only_where_they_say_also(text: str, also: bool) -> None:
    assert analyse(text).also is also


def test_the_stored_statement_keeps_that_it_adds() -> None:
    """ "Also" is not filler: without it a second class would read as the first one moved."""
    content = clean_content("btw also signed up for a Saturday yoga class")
    assert content == "also signed up for a Saturday yoga class"
    assert analyse(content).also


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("Moved back home to Duluth to help my mom", "duluth"),
        ("So the lease ran out and I ended up moving to Boulder, way quieter here.", "boulder"),
        ("Since the move to Albuquerque the kids keep asking where all the water went.", "albuquerque"),
        ("I'm thinking about moving to Austin next year.", None),  # a plan, not a move
        ("My best friend moved to Chicago.", None),  # the friend's city
    ],
)
def test_a_move_told_in_other_words_fills_the_city(text: str, city: str | None) -> None:
    assert read_slots(text)[0].get("city") == (frozenset({city}) if city else None)


@pytest.mark.parametrize(
    ("text", "job"),
    [
        ("Got hired on at the library as a circulation assistant.", {"library", "circulation assistant"}),
        ("Starbucks hired me!! better hours", {"starbucks"}),
        ("Took a bartending job at the marina, way better tips.", {"bartending"}),
        ("Got laid off, picked up work as a delivery driver for now.", {"delivery driver"}),
        ("just got promoted to store manager", {"store manager"}),
        ("Starting at the county clerk's office as a records clerk two weeks from now.", {"records clerk"}),
        ("Landed a full-time job at the water department, starting Monday.", {"water department"}),
        ("I started a new job!", {"a new job"}),
        ("I'm a park ranger now.", {"park ranger"}),
        ("My husband got hired as a firefighter.", None),  # his job, not mine
        ("He took a job in Denver.", None),
        ("Jamie got promoted to captain last week!!", None),  # Jamie's job
        ("I got a job interview on Friday.", None),  # not a job yet
        ("I didn't get hired at the bank.", None),
    ],
)
def test_a_new_job_told_as_its_start_fills_the_job(text: str, job: set[str] | None) -> None:
    assert read_slots(text)[0].get("job") == (frozenset(job) if job else None)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I'm a barista at a cafe downtown.", "Got hired on at the library as a circulation assistant."),
        ("I work as a receptionist.", "Landed a job at the water department, starting Monday."),
        ("I'm a shift lead at a grocery store.", "Just got promoted to store manager!"),
    ],
)
def test_a_new_job_replaces_the_old_one(old: str, new: str) -> None:
    assert _relation(old, new) == CONTRADICTS


@pytest.mark.parametrize(
    ("text", "changed"),
    [
        ("今年我改玩飞盘了。", True),  # 改玩: switched to
        ("那个练腻了，最近迷上了攀岩。", True),  # tired of it
        ("奶茶店盘出去了，我现在在商场卖眼镜。", True),  # the shop was sold on
        ("饭馆转手给了表哥，我不干了。", True),
        ("教练把课挪到周六上午了。", True),  # a class moved
        ("例会推迟到下午三点了。", True),
        ("我周末一般去打台球。", False),
        ("我开了家奶茶店。", False),
    ],
)
def test_chinese_says_that_something_changed(text: str, changed: bool) -> None:
    assert analyse(text).changed is changed


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        ("Brought home a rescue pup yesterday, we're calling him Biscuit.", {"name:dog": {"biscuit"}}),
        ("Got a kitten last week and we named her Pepper", {"name:kitten": {"pepper"}}),
        ("My neighbor got a puppy and named him Rex", {}),  # the neighbour's
        ("Declared my major today, marine biology!", {"major": {"marine biology"}}),
    ],
)
def test_a_pet_named_as_it_comes_home_and_a_declared_major_fill_their_slots(
    text: str, slots: dict[str, set[str]]
) -> None:
    assert read_slots(text)[0] == {key: frozenset(values) for key, values in slots.items()}


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        ("上个月去了物流公司做仓库管理员，工资高一点。", {"job": {"仓库管理员"}}),
        ("我老公去了银行做柜员。", {"job:老公": {"柜员"}}),  # the husband's job
        ("公司把我调到南宁分公司了，上周刚过来。", {"city": {"南宁"}}),
        ("上周正式去区税务局报到了。", {"job": {"区税务局"}}),
        ("Sold my car to my cousin and got a Kia Telluride.", {"car": {"kia"}}),
        ("the insurance payout went into a Ford Maverick", {"car": {"ford"}}),
        ("I drive a little Mazda3, great on gas", {"car": {"mazda"}}),
        ("My brother got a Honda Civic", {}),  # the brother's
        ("Lease ran out and we landed in Flagstaff, the light here is unreal.", {"city": {"flagstaff"}}),
    ],
)
def test_a_new_workplace_a_posting_and_a_car_fill_their_slots(text: str, slots: dict[str, set[str]]) -> None:
    assert read_slots(text)[0] == {key: frozenset(values) for key, values in slots.items()}


def test_a_nickname_offered_to_the_agent_is_what_to_call_the_user() -> None:
    """ "you can too": the nickname is what the user wants to be called, so "call me Dez" replaces it."""
    offered = analyse("I'm an electrician, my crew calls me Sparky, you can too")
    assert offered.slots["name"] == {"sparky"}
    assert relation(analyse("scratch that old nickname. call me Dez"), offered) == CONTRADICTS
    assert "name" not in analyse("My crew calls me Sparky").slots
