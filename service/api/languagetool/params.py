"""The parameters of LanguageTool's ``/v2/check``, read as LanguageTool reads them.

LanguageTool's server reads a POST body as URL-encoded parameters whatever its ``Content-Type`` says
(LTeX sends them as ``application/json``), and the query string too (its values win). So does this
module; a parameter it does not know is ignored, as there. What it refuses, it refuses with the
message LanguageTool gives, so clients that look for one (an unknown language: "... is not a
language code known to LanguageTool") understand it.

``username`` is the experiment's sticky key (``client.user_id`` of ``/v1/correct``) and ``instanceId``
its session key; ``apiKey`` is a credential (this service's API key, when keys are configured:
``access/control.py``), never a sticky key.
``alternatives`` (0-5) is ours, not LanguageTool's: beam-search n-best as further replacements, as in
``/v1/correct``.

``language`` is ``en``, ``auto`` or an English dialect (``en-US``, ``en-GB``, ``en-CA``, ``en-AU``); a dialect named
turns on its spelling variants (``CheckParams.dialect``, ``service.text.dialects``), ``en`` and ``auto`` accept both
spellings.

``detected_language`` names a detected language as LanguageTool names it in an answer: English as the English variant
the answer is in, a language LanguageTool checks by its name and its default variant's code ("German (Germany)",
``de-DE``), any other by its English name and its ISO code.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from service.text.annotation import AnnotatedText, AnnotationError, parse_data
from service.text.rules import RuleSelection


@dataclass(frozen=True)
class Language:
    name: str
    code: str
    long_code: str


ENGLISH = Language("English", "en", "en")
AMERICAN = Language("English (US)", "en", "en-US")
BRITISH = Language("English (GB)", "en", "en-GB")
CANADIAN = Language("English (Canadian)", "en", "en-CA")
AUSTRALIAN = Language("English (Australian)", "en", "en-AU")
LANGUAGES = {language.long_code.casefold(): language for language in (ENGLISH, AMERICAN, BRITISH, CANADIAN, AUSTRALIAN)}
AUTO = "auto"

# The languages LanguageTool checks, as it answers a detection of one: its name and its default variant's code.
_LANGUAGETOOL_NAMES = {
    "ar": ("Arabic", "ar"), "ast": ("Asturian", "ast-ES"), "be": ("Belarusian", "be-BY"), "br": ("Breton", "br-FR"),
    "ca": ("Catalan", "ca-ES"), "da": ("Danish", "da-DK"), "de": ("German (Germany)", "de-DE"),
    "el": ("Greek", "el-GR"), "eo": ("Esperanto", "eo"), "es": ("Spanish", "es"), "fa": ("Persian", "fa"),
    "fr": ("French", "fr"), "ga": ("Irish", "ga-IE"), "gl": ("Galician", "gl-ES"), "it": ("Italian", "it"),
    "ja": ("Japanese", "ja-JP"), "km": ("Khmer", "km-KH"), "nl": ("Dutch", "nl"), "pl": ("Polish", "pl-PL"),
    "pt": ("Portuguese (Portugal)", "pt-PT"), "ro": ("Romanian", "ro-RO"), "ru": ("Russian", "ru-RU"),
    "sk": ("Slovak", "sk-SK"), "sl": ("Slovenian", "sl-SI"), "sv": ("Swedish", "sv"), "ta": ("Tamil", "ta-IN"),
    "tl": ("Tagalog", "tl-PH"), "uk": ("Ukrainian", "uk-UA"), "zh": ("Chinese", "zh-CN"),
}  # fmt: skip
# English names of every language the identifier knows (service.text.language: lid.176's codes), "code=Name|...".
_NAME_TABLE = """
af=Afrikaans|als=Alemannic|am=Amharic|an=Aragonese|ar=Arabic|arz=Egyptian Arabic|as=Assamese|ast=Asturian|
av=Avaric|az=Azerbaijani|azb=South Azerbaijani|ba=Bashkir|bar=Bavarian|bcl=Central Bikol|be=Belarusian|bg=Bulgarian|
bh=Bihari|bn=Bengali|bo=Tibetan|bpy=Bishnupriya|br=Breton|bs=Bosnian|bxr=Buryat|ca=Catalan|cbk=Chavacano|ce=Chechen|
ceb=Cebuano|ckb=Central Kurdish|co=Corsican|cs=Czech|cv=Chuvash|cy=Welsh|da=Danish|de=German|diq=Zazaki|
dsb=Lower Sorbian|dty=Doteli|dv=Divehi|el=Greek|eml=Emilian-Romagnol|en=English|eo=Esperanto|es=Spanish|et=Estonian|
eu=Basque|fa=Persian|fi=Finnish|fr=French|frr=North Frisian|fy=Western Frisian|ga=Irish|gd=Scottish Gaelic|
gl=Galician|gn=Guarani|gom=Goan Konkani|gu=Gujarati|gv=Manx|he=Hebrew|hi=Hindi|hif=Fiji Hindi|hr=Croatian|
hsb=Upper Sorbian|ht=Haitian Creole|hu=Hungarian|hy=Armenian|ia=Interlingua|id=Indonesian|ie=Interlingue|
ilo=Ilocano|io=Ido|is=Icelandic|it=Italian|ja=Japanese|jbo=Lojban|jv=Javanese|ka=Georgian|kk=Kazakh|km=Khmer|
kn=Kannada|ko=Korean|krc=Karachay-Balkar|ku=Kurdish|kv=Komi|kw=Cornish|ky=Kyrgyz|la=Latin|lb=Luxembourgish|
lez=Lezgian|li=Limburgish|lmo=Lombard|lo=Lao|lrc=Northern Luri|lt=Lithuanian|lv=Latvian|mai=Maithili|mg=Malagasy|
mhr=Eastern Mari|min=Minangkabau|mk=Macedonian|ml=Malayalam|mn=Mongolian|mr=Marathi|mrj=Western Mari|ms=Malay|
mt=Maltese|mwl=Mirandese|my=Burmese|myv=Erzya|mzn=Mazanderani|nah=Nahuatl|nap=Neapolitan|nds=Low German|ne=Nepali|
new=Newari|nl=Dutch|nn=Norwegian Nynorsk|no=Norwegian|oc=Occitan|or=Odia|os=Ossetian|pa=Punjabi|pam=Kapampangan|
pfl=Palatine German|pl=Polish|pms=Piedmontese|pnb=Western Punjabi|ps=Pashto|pt=Portuguese|qu=Quechua|rm=Romansh|
ro=Romanian|ru=Russian|rue=Rusyn|sa=Sanskrit|sah=Yakut|sc=Sardinian|scn=Sicilian|sco=Scots|sd=Sindhi|
sh=Serbo-Croatian|si=Sinhala|sk=Slovak|sl=Slovenian|so=Somali|sq=Albanian|sr=Serbian|su=Sundanese|sv=Swedish|
sw=Swahili|ta=Tamil|te=Telugu|tg=Tajik|th=Thai|tk=Turkmen|tl=Tagalog|tr=Turkish|tt=Tatar|tyv=Tuvan|ug=Uyghur|
uk=Ukrainian|ur=Urdu|uz=Uzbek|vec=Venetian|vep=Veps|vi=Vietnamese|vls=West Flemish|vo=Volapük|wa=Walloon|war=Waray|
wuu=Wu Chinese|xal=Kalmyk|xmf=Mingrelian|yi=Yiddish|yo=Yoruba|yue=Cantonese|zh=Chinese
"""
_NAMES = dict(entry.split("=") for entry in _NAME_TABLE.replace("\n", "").split("|"))

MAX_FIELDS = 100
MAX_KEY_CHARS = 256  # username, instanceId: as client.user_id / session_id of /v1/correct
MAX_ALTERNATIVES = 5
_LANGUAGE_CODE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*")


# The parameters as the OpenAPI schema states them (form fields of POST, the query of GET): what
# ``check_params`` refuses with 400 is what these schemas exclude, except the rules that tie two
# parameters together (``text`` or ``data``; ``preferredVariants`` only with ``language=auto``).
_STRING = {"type": "string"}
CHECK_PARAMETERS: dict[str, dict[str, Any]] = {
    "text": {**_STRING, "description": "the text to check (or `data`)"},
    "data": {**_STRING, "description": 'LanguageTool\'s annotation as JSON: {"annotation": [{"text"}, {"markup"}]}'},
    "language": {
        **_STRING,
        "pattern": "^([eE][nN](-([uU][sS]|[gG][bB]|[cC][aA]|[aA][uU]))?|[aA][uU][tT][oO])$",
        "description": "en, en-US, en-GB, en-CA, en-AU or auto (any case); a dialect named: its spelling variants",
    },
    "motherTongue": {**_STRING, "pattern": "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"},
    "enabledRules": {**_STRING, "description": "comma-separated rule ids"},
    "disabledRules": {**_STRING, "description": "comma-separated rule ids"},
    "enabledCategories": {**_STRING, "description": "comma-separated category ids"},
    "disabledCategories": {**_STRING, "description": "comma-separated category ids"},
    "enabledOnly": {**_STRING, "description": "true or yes: only the enabled rules and categories"},
    "level": {**_STRING, "enum": ["", "default", "picky"]},
    "preferredVariants": {**_STRING, "description": "comma-separated language codes (with language=auto)"},
    "username": {**_STRING, "maxLength": MAX_KEY_CHARS, "description": "the experiment's sticky key"},
    "instanceId": {**_STRING, "maxLength": MAX_KEY_CHARS, "description": "the experiment's session key"},
    "apiKey": {**_STRING, "description": "accepted, never used"},
    "alternatives": {"type": "integer", "minimum": 0, "maximum": MAX_ALTERNATIVES, "description": "n-best (ours)"},
}


class BadCheckRequestError(ValueError):
    """A ``/v2/check`` request LanguageTool would answer 400 (the message is the answer's text)."""


@dataclass(frozen=True)
class CheckParams:
    text: AnnotatedText
    language: Language  # the English variant the answer is in (with auto, when the text is English)
    auto: bool  # the client asked for language=auto
    rules: RuleSelection
    alternatives: int
    level: str  # "default" or "picky"
    user_id: str | None
    session_id: str | None

    @property
    def dialect(self) -> str | None:
        """The English dialect whose spelling the client named (``service.text.dialects``), None for ``en`` and
        ``auto``: both spellings stand."""
        return None if self.auto or self.language is ENGLISH else self.language.long_code


def decode_form(body: bytes, query: str) -> dict[str, str]:
    """URL-encoded parameters of a body and a query string (the query's win), as LanguageTool merges them."""
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, errors="strict", max_num_fields=MAX_FIELDS)
        pairs += parse_qsl(query, keep_blank_values=True, errors="strict", max_num_fields=MAX_FIELDS)
    except UnicodeDecodeError as error:
        message = f"Could not decode the parameters as UTF-8 (byte {error.start}: {error.reason})"
        raise BadCheckRequestError(message) from None
    except ValueError as error:  # too many fields
        raise BadCheckRequestError(f"Could not decode the parameters: {error}") from None
    return dict(pairs)


def check_params(params: dict[str, str]) -> CheckParams:
    """The check a request asks for, or ``BadCheckRequestError``."""
    language, auto = _language(params)
    mother_tongue = params.get("motherTongue")
    if mother_tongue is not None and not _LANGUAGE_CODE.fullmatch(mother_tongue):
        raise BadCheckRequestError(f"'{mother_tongue}' isn't a valid language code (motherTongue)")
    if params.get("level") not in (None, "", "default", "picky"):
        raise BadCheckRequestError("If 'level' is set, it must be set to 'default' or 'picky'")
    enabled_only = params.get("enabledOnly", "false") in ("true", "yes")
    enabled_rules, enabled_categories = _ids(params, "enabledRules"), _ids(params, "enabledCategories")
    if enabled_only and not (enabled_rules or enabled_categories):
        raise BadCheckRequestError("You must specify enabled rules or categories when using enabledOnly=true")
    disabled_rules, disabled_categories = _ids(params, "disabledRules"), _ids(params, "disabledCategories")
    rules = RuleSelection(enabled_rules, disabled_rules, enabled_categories, disabled_categories, enabled_only)
    return CheckParams(
        _text(params),
        language,
        auto,
        rules,
        _alternatives(params.get("alternatives", "0")),
        params.get("level") or "default",
        _key(params, "username"),
        _key(params, "instanceId"),
    )


def detected_language(code: str, english: Language) -> Language:
    """LanguageTool's name and code for a detected language (``service.text.language``'s ISO ``code``; see the module
    docstring): English, and nothing detected ("", as LanguageTool falls back to English), are ``english``."""
    if code in ("", ENGLISH.code):
        return english
    name, long_code = _LANGUAGETOOL_NAMES.get(code, (_NAMES.get(code, code), code))
    return Language(name, code, long_code)


def _text(params: dict[str, str]) -> AnnotatedText:
    if "text" in params and "data" in params:
        raise BadCheckRequestError("Set only 'text' or 'data' parameter, not both")
    if "text" in params:
        return AnnotatedText.of_text(params["text"])
    if "data" not in params:
        raise BadCheckRequestError("Missing 'text' or 'data' parameter")
    try:
        return parse_data(json.loads(params["data"]))
    except json.JSONDecodeError:
        raise BadCheckRequestError("Could not parse JSON from 'data' parameter") from None
    except AnnotationError as error:
        raise BadCheckRequestError(str(error)) from None


def _language(params: dict[str, str]) -> tuple[Language, bool]:
    """The English variant to answer in, and whether the language was ``auto`` (then the first English variant in
    ``preferredVariants``, else American English)."""
    code = params.get("language")
    if not code:
        raise BadCheckRequestError("Missing 'language' parameter. Use 'language=auto' to let the server choose")
    variants = _ids(params, "preferredVariants")
    for variant in variants:
        if not _LANGUAGE_CODE.fullmatch(variant):
            raise BadCheckRequestError(f"'{variant}' isn't a valid language code (preferredVariants)")
    if code.casefold() == AUTO:
        preferred = [LANGUAGES[v.casefold()] for v in variants if v.casefold() in LANGUAGES]
        return (preferred[0] if preferred else AMERICAN), True
    if variants:
        raise BadCheckRequestError("You specified 'preferredVariants' but you didn't specify 'language=auto'")
    if code.casefold() not in LANGUAGES:
        supported = ", ".join(sorted(language.long_code for language in LANGUAGES.values()))
        raise BadCheckRequestError(
            f"'{code}' is not a language code known to LanguageTool. Supported language codes are: {supported}."
            " This server corrects English only."
        )
    return LANGUAGES[code.casefold()], False


def _ids(params: dict[str, str], name: str) -> frozenset[str]:
    """A comma-separated list, without blanks."""
    return frozenset(part.strip() for part in params.get(name, "").split(",") if part.strip())


def _key(params: dict[str, str], name: str) -> str | None:
    value = params.get(name) or None
    if value is not None and len(value) > MAX_KEY_CHARS:
        raise BadCheckRequestError(f"'{name}' is longer than {MAX_KEY_CHARS} characters")
    return value


def _alternatives(value: str) -> int:
    if value not in {str(n) for n in range(MAX_ALTERNATIVES + 1)}:
        raise BadCheckRequestError(f"'alternatives' must be a whole number from 0 to {MAX_ALTERNATIVES}, not '{value}'")
    return int(value)
