"""Domain layer: the curated offensive-word blocklists (ruling 16) and the checks that use them.

One list per language: the 13 game languages and the UI languages (en, nl, mk, hi, ar). Each
list holds vulgar, sexual, scatological and slur words and the common insults built on them. They
are written by the team from general knowledge of each language (no third-party list is copied);
the word-list builder (``wordlists/build.py``) applies them to the answers, with the LDNOOBW
``naughty-words`` lists and the hand blocklists of ``wordlists/<lang>/blocklist.txt``; the
nickname rules (``shared.domain.nicknames``) apply every list to every nickname, whatever the
player's language, since a nickname is shown to players of all languages.

Entry syntax, one per line: a plain entry matches a whole word; ``word*`` also matches inside a
longer word (only for roots that are never innocent, such as ``fuck*``); ``~word`` applies to that
language's answers only, because it is an innocent word elsewhere (French ``pine`` vs English
"pine") and would refuse harmless nicknames. Entries are compared after ``fold``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from shared.domain.glyphs import nfkc_casefold, skeleton

__all__ = [
    "BLOCKLIST_LANGUAGES",
    "Blocklist",
    "blocklist",
    "fold",
    "nickname_is_offensive",
]

# Digits typed for look-alike letters (l33t): only inside a run that also has letters.
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b"})
# Latin letters typed in a Cyrillic word, and back, make one script: fold each to Latin.
_CYRILLIC_LOOKALIKES = str.maketrans(
    {"а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "к": "k", "і": "i"}
)
# Cyrillic and Greek letters read as the Latin letters they pass for in a word ("niggεr"),
# where the UTS #39 prototype is another letter (ε → ꞓ, к → ĸ, υ → ʋ).
_READ_AS_LATIN = str.maketrans(
    {
        **dict(zip("аеорсухкіјѕһԁӏ", "aeopcyxkijshdl", strict=True)),
        **dict(zip("αβεικνορτυχ", "abeiknoptux", strict=True)),
    }
)


def fold(text: str) -> str:
    """The comparison form: NFKC case folded (``𝗳𝘂𝗰𝗸``, ``ｆｕｃｋ`` → fuck), marks stripped
    (é→e, й→и, ё→е), ß→ss; NFC."""
    out = []
    for ch in unicodedata.normalize("NFD", nfkc_casefold(text)):
        if not unicodedata.combining(ch):
            out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def _skeleton(folded: str) -> str:
    return skeleton(folded).casefold()


_RAW: dict[str, str] = {
    # English: sexual, scatological, slurs, insults.
    "en": """
        *fuck* *nigger* *nigga* *faggot* cunt* motherf* fagot bitch* whore* slut* cock
        cocks cocksuck* dick dicks dickhead* prick pricks pussy pussies twat* bollock* arse
        arsehole* ass asses asshole* bastard* bugger* crap crappy piss* turd turds dildo* porn*
        horny penis penises vagina* vulva clit clits clitoris* boob boobs boobies titty titties
        tits anal anus scrotum
        testicle* sperm semen cum cumshot* jizz* orgasm* orgy orgies blowjob* handjob* rimjob*
        bukkake* hentai* milf* incest* pedo pedos pedophile* paedo* rape rapes raped rapist* molest*
        nazi nazis hitler kike* spic spics chink* gook* wetback* tranny* retard* spaz dyke dykes
        homo homos queer* coon coons darkie* negro negros negroes paki pakis raghead* towelhead*
        gypsy gyp honky*
        redneck* hooker* skank* thot pimp pimps sex sexy sexual nude nudes naked stripper* douche*
        scumbag* dumbass jackass tosser* bellend* knobhead* minge* punani* poop
        poops fart farts farting butt butthole* boner* erection kinky fetish* bdsm bondage* kkk
        shit shits shitty shitter* shitting shithead* shitface* shitshow* shitstorm* bullshit*
        horseshit* dipshit* batshit apeshit chickenshit* wank wanks wanked wanking wanker*
        """,
    # Indonesian: kasar (rude) words, sexual words, insults.
    "id": """
        anjir bangsat bajingan brengsek kampret kontol* memek* ngentot* entot* ngewe* jembut* peler*
        pepek* titit* tetek toket* ngaceng* coli colmek bokep* perek* lonte* pelacur* sundal*
        jablay* bencong* banci* homo lesbi pantat tai taik tahi berak kencing goblok* tolol* bego
        idiot dungu keparat laknat jancok* jancuk* cuk bacot bangke sialan kafir* porno seks seksi
        bugil telanjang payudara penis vagina sperma orgasme dildo* zina* cabul* mesum* perkosa*
        pemerkosa* pedofil*
        """,
    # German: vulgar, sexual, slurs.
    "de": """
        fick ficks ficke ficken* ficker* fickt gefickt* *scheiß* *scheiss* arschloch* arsch ärsche
        kacke kack* pisse pissen piss* fotze* möse
        mösen muschi* schlampe* hure huren hurensohn* nutte* nutten wichs* wixx* wixer* schwanz*
        pimmel* penis penisse vagina* titte* titten busen nippel dildo* porno* porn* sex sexy
        geil geile
        geiler orgie* orgasmus* sperma* onanie* masturb* bumsen vögeln poppen schwul* schwuchtel*
        homo homos lesbe* tunte* neger negers negerin negerkuss* nigger* anal kanake* kanacke*
        zigeuner* polack* kümmeltürke* spast* spasti* mongo krüppel* missgeburt* bastard* idiot
        idioten wichser* penner* spacko* depp dödel* ficken vergewalt* vergasen nazi nazis hitler
        judensau* kinderschänder* pädo* pädophil* prostituierte* bordell* stricher* fetisch*
        """,
    # Spanish: vulgar, sexual, slurs.
    "es": """
        puta putas putita* puto putos hijoputa* hijueputa* joder* jodido* jodida coño* cojon* cojón
        cojones polla* pollas verga* vergas pija pijas pinga chocho ojete* culo culos mierda* cagar
        cagada cabrón* cabron* cabrona maricón* maricon* marica* mariquita joto* puñeta* pendejo*
        pendeja* gilipolla* capullo* mamón* mamon* mamada* chingar* chingada* chingado* pinche*
        culero* furcia* ramera* prostituta* follar* follada* tetas teta pezón* pene penes vagina*
        clítoris* semen esperma orgasmo* orgía* porno* sexo sexy sexual* anal dildo* masturb*
        pajero* cachondo* correrse negrata* sudaca* maketo* panchito* subnormal* retrasado*
        mongólico* idiota imbécil* nazi nazis hitler violar* violación violador* pedófilo*
        """,
    # French: vulgar, sexual, slurs.
    "fr": """
        *putain* pute* putes enculé* encule* enculer* salope* salaud* connard* connasse* conne ~con
        cons couille* ~bite ~bites ~pine ~pines chatte* foutre* baiser baise baisé nique niqué
        niquez niquer* ntm homo anal dildo* merde* emmerde* chier chiasse* cul culs trouduc* branle*
        branler* branleur* pédé* pede tapette gouine* enfoiré* bâtard* batard* bordel* catin*
        pouffiasse* pétasse* petasse* grognasse* trainée* pisse* pisser zizi* zob* teub* chibre*
        nichon* nichons tétons téton pénis vagin* clitoris* sperme* orgasme* orgie* porno* sexe
        sexy masturb* sodomi* fellation* suceur* suceuse* éjacul* bougnoul* bougnoule*
        négro négros nègre*
        bamboula* youpin* youtre* bicot* chinetoque* niakoué* crouille* gogol* triso* attardé*
        débile* nazi nazis hitler viol violer* violeur* pédophile*
        """,
    # Italian: vulgar, sexual, blasphemous, slurs.
    "it": """
        *cazz* *minchi* figa fighe ~fica ~fiche ~mona cornuto* cornuti puttana* puttane puttanata*
        troia* troie zoccola* zoccole mignotta* baldracca* sgualdrina* stronzo* stronza* stronzi
        merda* merde culo culi culone* culattone* frocio* froci finocchio* ricchione* ricchioni
        checca* lesbica* vaffanculo* fanculo* affanculo* scopare* scopata* fottere* fottuto*
        fottuta* sborra* sborrare* ~sega ~seghe segaiolo* pompino* pompini bocchino* tette tetta
        zizze capezzolo* pene peni vagina* clitoride* sperma* orgasmo* orgia* porno* sesso sexy anal
        dildo* fetish* masturb* coglione* coglioni minchione* pirla pippa bastardo* bastarda*
        porcodio* porcamadonna* diocane* negro negri negra terrone* polentone* zingaro* zingari
        handicappato* mongoloide* ritardato* idiota deficiente* nazi nazista* hitler stupro*
        stuprare* stupratore* pedofilo*
        """,
    # Dutch: vulgar, sexual, disease curses, slurs.
    "nl": """
        kut kutje* kutwijf* kuthoer* kutzooi* kutkop* anus pissig anal lul lullen lulletje* pik
        piemel* penis vagina* dildo* neuk* geneukt klote* kloot* kloten klootzak* hoer* hoeren
        hoerenzoon* slet* sletten teef* bitch* trut trutten tering* tyfus* kanker* kolere* pleuris*
        godver* godverdomme* verdomme* gadver* shit stront* schijt* zeik* zeiken* pis pissen*
        pisbak* poep poepen* reet kont kontgat* tiet tieten sperma* orgasme* orgie* porno* seks sexy
        geil geile geiler masturb* rukker* pijpbeurt* beffen* flikker* flikkers homo homos mietje*
        lesbo* neger negers negerin nikker* kaaskop* zigeuner* mongool* mongolen debiel* idioot
        eikel eikels sukkel* lijer* mafkees* nazi nazis hitler verkrachten* verkrachting*
        verkrachter* pedo pedofiel*
        """,
    # Uzbek (1995 Latin and the plain-apostrophe spellings): so'kinish words.
    "uz": """
        qoʻtoq* qotoq* koʻt jalab* fohisha* itvachcha* haromi* haromzoda* ahmoq* axmoq* tentak*
        jinni* eshak* onangni* sikish* sik siktir* amcha* iflos* ablah* nomard* yaramas* badbaxt*
        laʼnati* lanati* xotinboz* gey pidaras* pidor* seks porno* jinsiy* yalangʻoch*
        """,
    # Polish: wulgaryzmy, sexual, slurs.
    "pl": """
        *kurw* *chuj* *pierdol* huj huja hujem hujowy* hujowo pierdziel* jeb* zajeb* wyjeb* pojeb*
        spierdal* odpierdal* *pizd* cipa* cipka* cipy dupa* dupek* dupy gówno* gówna sraka* srać
        sracz* szczać* szczyny* kutas* fiut* ciul* penis wagina* łechtaczka* sperma* orgazm* orgia*
        porno* seks seksowny masturb* walić walenie obciąg* lodzik* ruchać* ruchanie* dymać* bzykać*
        bzykanie* suka suki sukinsyn* dildo* anal szmata* szmaty dziwka* dziwki prostytutk* lachon*
        pedał* pedały ciota* cioty lesba* parówa* murzyn* czarnuch* żydek* cygan* kacap* debil*
        idiota kretyn* downie* ciapat* nazista* hitler gwałt* gwałcić* gwałciciel* pedofil*
        """,
    # Portuguese (BR and PT): palavrões, sexual, slurs.
    "pt": """
        porra* caralho* foder* fodido* fodida* foda fodas fode fodase* puta putas puto putos
        putaria* merda* bosta* cacete* buceta* boceta* xoxota* xereca* piroca* ~pica ~rola ~pau
        ~pinto ~cu cuzão* cuzao* arrombado* arrombada* viado* veado* bicha* boiola* sapatão*
        sapatona* traveco* corno* cornos vagabunda* vadia* rameira* prostituta* meretriz* safada*
        safado* tesão* tesudo* tesuda* gozada* punheta* siririca* boquete* teta tetas mamilo* pênis
        vagina* clitóris* esperma* sêmen orgasmo* orgia* porno* pornô* sexo sexy sexual* anal homo
        bordel* violar dildo* masturb* broxa* brocha* otário* otaria babaca* imbecil* idiota
        cretino* retardado* mongoloide* crioulo* negão* tição* nazista* hitler estupro* estuprar*
        estuprador* pedófilo*
        """,
    # Kazakh (Cyrillic): балағат сөздер, sexual, slurs.
    "kk": """
        сігу* сік* сікі* сігіл* қотақ* котак* ам амың* жезөкше* жалап* қаншық* *бляд* блять* сука*
        *хуй* *пизд* ебат* ебан* еблан* жыныстық* зорлау* зорлаушы* зорлық* мастурб* порно* секс*
        оргазм* шәует* қатын* иттің* ақымақ* малғұн* оңбаған* нәжіс* боқ* педофил*
        """,
    # Russian: мат, sexual, slurs.
    "ru": """
        *хуй* хуе* хуя* хуё* хуи* дилдо* нахуй* похуй* *пизд* пезд* ебат* ебан* ебал* ебну* ебуч*
        ебло* ебля ебу ебёт* заеб* выеб* наеб* уеб* долбоеб* долбоёб* бля* блять* *блядь* *бляд*
        сука* суки сучка* сучара* шлюха* шлюхи шалава* проститут* потаскух* мудак* мудил* мудозвон*
        манда мандавош* гандон* гондон* залуп* пидор* пидар* педик педераст* гомик* гомосек* лесбух*
        пенис* вагина* клитор* сперма* оргазм* оргия* порно* секс* мастурб* дрочить* дроч* минет*
        сиськ* титьк* жопа* жопы жопу срать* сраный* говно* говна дерьмо* ссать* ссаный* пердеть*
        пердун* жид жиды жидовка гавн* черномазый* чурка хач хачи хохол хохлы кацап* москаль* нигер*
        негр* дебил* идиот* кретин* даун* урод* ублюдок* мразь* сволочь* падла* тварь* гитлер
        насиловать* насильник* изнасил* педофил*
        """,
    # Ukrainian: лайка, sexual, slurs.
    "uk": """
        *хуй* хує* хуя* хуї* нахуй* *пизд* жопа* урод* шлюха* ділдо* їбат* ебат* їбан* йоб* єба*
        заїб* виїб* бля* блять* *блядь* *бляд* сука* суки сучка* курва* шльондра* повія* повії
        хвойда* курвисько* мудак* мудил* гандон* гондон* залуп* підор* підар* педик педераст*
        гомосек* пеніс* піхва* вагіна* клітор* сперма* оргазм* оргія* порно* секс* мастурб* дрочит*
        дроч* мінет* цицьк* сиськ* дупа* дупи срака* сраний* срати* лайно* гівно* гімно* сцяти*
        сцикун* пердіт* жид* гавн* чурка москаль* кацап* хохол негр* нігер* дебіл* ідіот* кретин*
        даун* виродок* покидьок* мерзота* падлюка* тварюка* гітлер зґвалт* гвалтув* педофіл*
        """,
    # Macedonian (a UI language): пцовки, sexual, slurs.
    "mk": """
        курац* курви* курва* пичка* пичкин* пичко* ебам* ебење* јебам* јебе* јебење* јебига* шупак*
        педер* педери пиздар* *пизд* кур говно* говна глупак* кретен* идиот* дебил* сперма* порно*
        секс* циганин* шиптар* курвар* курвето* проститутка* силување* силувач* педофил* хитлер
        """,
    # Hindi (a UI language, in Devanagari and in the usual Latin spellings).
    "hi": """
        चूतिया* चुतिया* चूत* भोसड़ी* भोसडी* मादरचोद* बहनचोद* बेहेनचोद* भेनचोद* लौड़ा* लौडा* लंड*
        गांडू* गांड* रंडी* रण्डी* हरामी* हरामज़ादा* हरामजादा* कुतिया* कमीना* कमीने* चोद* चुदाई* झाट*
        भड़वा* भडवा* हिजड़ा* छक्का* सेक्स* पोर्न* chutiya* chutia* choot* chut bhosdi* bhosadi*
        *madarchod* *maderchod* *behenchod* *bhenchod* *benchod* lauda lavda gandu gaand* randi
        harami* haramzad* kamina* kamine* chod* chudai* jhaat* bhadwa* bhadva* chakka
        """,
    # Arabic (a UI language, in Arabic script and in the usual Latin spellings).
    "ar": """
        كس كسمك* كسختك* طيز* زب زبي شرموطة* شرموط* قحبة* قحاب* منيوك* منيك* نيك* ينيك* متناك* عرص*
        خول لوطي* شاذ ابن_الكلب* حقير* سكس* بورن* اباحي* kosomak* kusomak* sharmoota* sharmouta*
        sharmuta* qahba* kahba* manyak* manyouk* ayre khawal* khawwal* ibn_el_kalb*
        """,
}


@dataclass(frozen=True)
class Blocklist:
    """One language's curated entries, folded, grouped by how they match."""

    words: frozenset[str]
    """Whole words: refused as answers and as nickname words."""
    prefixes: frozenset[str]
    """``word*``: refused as the start of a word (``hure`` → ``Hurensohn``)."""
    infixes: frozenset[str]
    """``*word*``: refused anywhere inside a word (``motherfucker``); never-innocent roots."""
    answers_only: frozenset[str]
    """``~word``: refused as this language's answers only (an innocent word elsewhere)."""

    def blocks_answer(self, word: str) -> bool:
        """Whether ``word`` (any spelling; it is folded here) must never be an answer."""
        folded = fold(word)
        return folded in self.answers_only or _matches(
            folded, self.words, self.prefixes, self.infixes
        )


def _matches(
    word: str, words: frozenset[str], prefixes: Iterable[str], infixes: Iterable[str]
) -> bool:
    return (
        word in words
        or any(word.startswith(p) for p in prefixes)
        or any(i in word for i in infixes)
    )


def _parse(text: str) -> Blocklist:
    words: set[str] = set()
    prefixes: set[str] = set()
    infixes: set[str] = set()
    answers_only: set[str] = set()
    for raw in text.split():
        entry = raw.replace("_", "")
        if entry.startswith("~"):
            answers_only.add(fold(entry[1:]))
        elif entry.startswith("*") and entry.endswith("*"):
            infixes.add(fold(entry[1:-1]))
        elif entry.endswith("*"):
            prefixes.add(fold(entry[:-1]))
        else:
            words.add(fold(entry))
    return Blocklist(
        frozenset(words), frozenset(prefixes), frozenset(infixes), frozenset(answers_only)
    )


_LISTS: Mapping[str, Blocklist] = MappingProxyType({code: _parse(t) for code, t in _RAW.items()})

BLOCKLIST_LANGUAGES: tuple[str, ...] = tuple(_LISTS)
"""The 13 game languages, then the UI-only languages (mk, hi, ar)."""

_ALL_WORDS: frozenset[str] = frozenset().union(*(b.words for b in _LISTS.values()))
_ALL_PREFIXES: tuple[str, ...] = tuple(sorted(set().union(*(b.prefixes for b in _LISTS.values()))))
_ALL_INFIXES: tuple[str, ...] = tuple(sorted(set().union(*(b.infixes for b in _LISTS.values()))))
# The same words with Cyrillic letters that look Latin written in Latin ("cyka" for "сука").
_ALL_LOOKALIKES: frozenset[str] = frozenset(
    w.translate(_CYRILLIC_LOOKALIKES) for w in _ALL_WORDS | set(_ALL_PREFIXES)
)
# Every entry's UTS #39 skeleton, for the words written with look-alike letters ("fuсk").
_SKELETON_WORDS: frozenset[str] = frozenset(map(_skeleton, _ALL_WORDS))
_SKELETON_PREFIXES: tuple[str, ...] = tuple(sorted(set(map(_skeleton, _ALL_PREFIXES))))
_SKELETON_INFIXES: tuple[str, ...] = tuple(sorted(set(map(_skeleton, _ALL_INFIXES))))
# A whole word written across separators ("sh it", "fu.ck") is refused when the joined letters
# are an entry or an entry's root.
_ALL_ROOTS: frozenset[str] = _ALL_WORDS | frozenset(_ALL_PREFIXES) | frozenset(_ALL_INFIXES)


def blocklist(code: str) -> Blocklist:
    """The curated blocklist of language ``code``; raises ``KeyError`` for a language without."""
    return _LISTS[code]


_CAMEL = re.compile(r"(?<=[^\W\d_])(?<![A-ZÀ-ÞА-ЯЁ])(?=[A-ZÀ-ÞА-ЯЁ])")
_SEPARATORS = re.compile(r"[\s_.\-]+")
_DIGITS = "0123456789"


def _nickname_words(nickname: str) -> list[str]:
    """Split at separators, at lower→Upper steps and around numbers; read l33t digits."""
    out: list[str] = []
    for chunk in _SEPARATORS.split(unicodedata.normalize("NFC", nickname)):
        for part in _CAMEL.sub(" ", chunk).split():
            part = part.strip(_DIGITS)
            if part:
                out.append(fold(part.translate(_LEET)))
    return out


def _is_blocked(word: str) -> bool:
    if _matches(word, _ALL_WORDS, _ALL_PREFIXES, _ALL_INFIXES):
        return True
    if word.translate(_CYRILLIC_LOOKALIKES) in _ALL_LOOKALIKES:
        return True
    # Plain ASCII words are compared as typed: their skeletons would refuse innocent words
    # ("am" looks like Kazakh "ам"; "rn" like "m").
    if word.isascii():
        return False
    if _matches(_skeleton(word), _SKELETON_WORDS, _SKELETON_PREFIXES, _SKELETON_INFIXES):
        return True
    latin = word.translate(_READ_AS_LATIN)
    return latin.isascii() and _matches(latin, _ALL_WORDS, _ALL_PREFIXES, _ALL_INFIXES)


def _spelled_out(words: list[str]) -> list[str]:
    """Each run of two or more one- or two-letter words joined ("f u c k", "fu.ck")."""
    out: list[str] = []
    run: list[str] = []
    for word in [*words, ""]:
        if word and len(word) <= 2:
            run.append(word)
            continue
        if len(run) >= 2:
            out.append("".join(run))
        run = []
    return out


def nickname_is_offensive(nickname: str) -> bool:
    """Whether a nickname holds a word of any blocklist (the 13 game and the UI languages).

    The nickname is split into words (spaces, ``_ - .``, camel case, leading and trailing
    numbers), each folded (``fold``: NFKC case folding, marks stripped); digits inside a word
    are read as the letters they imitate ("sh1t"). A word is refused if it is a listed word,
    starts with a listed prefix or holds a listed infix (the never-innocent roots: Scunthorpe,
    Penistone and Matsushita pass); a word that is not plain ASCII is also compared by its
    UTS #39 skeleton (``shared.domain.glyphs.skeleton``: "fuсk" with a Cyrillic с) and with
    its Cyrillic and Greek letters read as the Latin ones they pass for ("niggεr"). Letters
    spelled out across separators ("f.u.c.k", "f u c k", "fu_ck") are joined and checked as
    one word; two or three neighbouring words written together ("shit head" → "shithead") are
    refused if they form a listed word or root (a whole word only: "Bass Hit" is fine).
    Answers-only entries are not used here.
    """
    words = _nickname_words(nickname)
    if any(_is_blocked(w) for w in words + _spelled_out(words)):
        return True
    joined = (
        "".join(words[i:j])
        for i in range(len(words))
        for j in range(i + 2, min(i + 3, len(words)) + 1)
    )
    return any(w in _ALL_ROOTS for w in joined)
