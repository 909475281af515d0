"""A spreadsheet cell's value as the spreadsheet shows it: its number format applied (domain; pure).

openpyxl hands over the stored value (a float, an int, a datetime, a string) and the cell's number format
code (``#,##0.00``, ``0%``, ``yyyy-mm-dd``, ...). ``cell_text`` renders the two the way a spreadsheet
application displays them for the common formats, exactly:

- General: integers without ``.0``; other floats with at most 15 significant digits (the precision the
  spreadsheet keeps), so 0.1+0.2 shows ``0.3``; exponents as ``1E+20``.
- Fixed decimals (``0``, ``0.00``, ``0.0##``), thousands separators (``#,##0``), scaling by trailing
  commas (``#,##0,``), percentages (``0%``, ``0.0%``), scientific (``0.00E+00``), literal text and currency
  (``"$"#,##0.00``, ``[$€-407] #,##0``, ``\\$0``), up to four sections (``pos;neg;zero;text``) with the
  negative section shown without a minus sign; colours and padding/fill characters (``_)``, ``*``) are
  dropped. Rounding is half away from zero on the 15-digit decimal value (2.675 with ``0.00`` is 2.68).
- Dates and times in the format's own order: ``yyyy``/``yy``, ``m``/``mm``/``mmm``/``mmmm``/``mmmmm``
  (months; minutes after an hour or before a second), ``d``/``dd``/``ddd``/``dddd``, ``h``/``hh``,
  ``ss``, fractional seconds (``ss.000``), ``AM/PM``/``A/P``, elapsed ``[h]``/``[mm]``/``[ss]``. Month and
  day names are English whatever the locale tag.

What falls back: fractions (``# ?/?``), conditional sections (``[>100]``), literals between digit
placeholders (``000-0000``) and any code not understood are shown as General; a datetime under a
non-date format is shown ISO-style (``2024-03-01``, ``2024-03-01 14:30:00``), and so are the built-in
short date formats the application shows in its user's locale (ids 14 and 22: ``yyyy-mm-dd [h:mm]``).
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

__all__ = ["cell_text", "general"]

_NEWLINES = re.compile(r"\r\n|\r|\n")
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
# The day Excel counts from (serial 0 in the 1900 system, accounting for its phantom 1900-02-29).
_EPOCH = dt.datetime(1899, 12, 30)
# The built-in short date formats (ids 14 and 22) are shown in the reader's locale by the application;
# openpyxl names them by their US form. Shown unambiguously instead.
_LOCALE_DATES = {"mm-dd-yy": "yyyy-mm-dd", "m/d/yy h:mm": "yyyy-mm-dd h:mm"}
_DATE_TOKEN = re.compile(r"\[(?:h+|m+|s+)\]|am/pm|a/p|y+|m+|d+|h+|s+(?:\.0+)?|e+", re.IGNORECASE)


def cell_text(value: object, number_format: str | None) -> str:
    """``value`` as shown under ``number_format`` (None or "General": the General format), on one line."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return _NEWLINES.sub(" ", value).strip()
    code = number_format or "General"
    if isinstance(value, (dt.datetime, dt.date, dt.time, dt.timedelta)):
        code = _LOCALE_DATES.get(code, code)
        return _date_text(value, code)
    if isinstance(value, (int, float)):
        try:
            return _number_text(value, code)
        except (ValueError, ArithmeticError, InvalidOperation):
            return general(value)
    return _NEWLINES.sub(" ", str(value)).strip()


def general(value: float) -> str:
    """The General format: integers as such, other floats to 15 significant digits, no float noise."""
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return "#NUM!"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = format(value, ".15g")
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign, digits = exponent[0], exponent[1:].lstrip("0")
        return f"{mantissa}E{sign}{digits.rjust(2, '0')}"
    return text


# -- format codes ------------------------------------------------------------------------------------


def _sections(code: str) -> list[str]:
    """The ``;``-separated sections of a format code (quotes, brackets and escapes respected)."""
    sections, current, i = [], [], 0
    while i < len(code):
        char = code[i]
        if char == '"':
            end = code.find('"', i + 1)
            end = len(code) - 1 if end < 0 else end
            current.append(code[i : end + 1])
            i = end + 1
            continue
        if char == "[":
            end = code.find("]", i + 1)
            end = len(code) - 1 if end < 0 else end
            current.append(code[i : end + 1])
            i = end + 1
            continue
        if char in "\\_*" and i + 1 < len(code):
            current.append(code[i : i + 2])
            i += 2
            continue
        if char == ";":
            sections.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    sections.append("".join(current))
    return sections


def _tokens(section: str) -> list[tuple[str, str]]:
    """A section as (kind, text): "lit" literal text, "code" format characters, "bracket" [..]."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(section):
        char = section[i]
        if char == '"':
            end = section.find('"', i + 1)
            end = len(section) if end < 0 else end
            out.append(("lit", section[i + 1 : end]))
            i = end + 1
        elif char == "[":
            end = section.find("]", i + 1)
            end = len(section) if end < 0 else end
            out.append(("bracket", section[i + 1 : end]))
            i = end + 1
        elif char == "\\" and i + 1 < len(section):
            out.append(("lit", section[i + 1]))
            i += 2
        elif section[i : i + 5].lower() == "am/pm":
            out.append(("code", section[i : i + 5]))
            i += 5
        elif section[i : i + 3].lower() == "a/p":
            out.append(("code", section[i : i + 3]))
            i += 3
        elif char in "Ee" and section[i + 1 : i + 2] in ("+", "-") and section[i + 1 : i + 2]:
            out.append(("code", section[i : i + 2]))
            i += 2
        elif char in "_*" and i + 1 < len(section):
            i += 2  # padding to a character's width, repeated fill: nothing to show in text
        elif char in "$-+/():!^&'~{}<>= ":
            out.append(("lit", char))
            i += 1
        else:
            out.append(("code", char))
            i += 1
    return out


def _bracket_literal(text: str) -> str | None:
    """The text a [...] shows: the symbol of a currency/locale tag ([$€-407] -> €), else nothing.
    None for a condition ([>=100]), which is not rendered."""
    if text.startswith("$"):
        return text[1:].split("-", 1)[0]
    if text[:1] in "<>=":
        return None
    return ""


# -- numbers -------------------------------------------------------------------------------------------


def _number_text(value: float, code: str) -> str:
    if code.strip().lower() in ("general", "@", ""):
        return general(value)
    sections = _sections(code)
    section, signed = sections[0], True
    if value < 0 and len(sections) > 1 and sections[1].strip():
        section, signed = sections[1], False
    elif value == 0 and len(sections) > 2 and sections[2].strip():
        section, signed = sections[2], False
    if "general" in section.lower():
        return general(value)
    prefix: list[str] = []
    core: list[str] = []
    suffix: list[str] = []
    percent = 0
    for kind, text in _tokens(section):
        if kind == "bracket":
            literal = _bracket_literal(text)
            if literal is None:
                return general(value)  # a condition ([>=100]): not rendered
            kind, text = "lit", literal
        if kind == "code":
            if text in ("0", "#", "?", ".", ",") or (text[:1] in "Ee" and len(text) == 2):
                if suffix:
                    return general(value)  # literal text between placeholders (000-0000)
                core.append(text)
                continue
            if text == "%":
                percent += 1
                (suffix if core else prefix).append("%")
                continue
            if text == "@":
                continue
            if text.isalnum():
                return general(value)  # a date letter or a fraction digit on a number
        (suffix if core else prefix).append(text)
    pattern = "".join(core)
    if not any(c in pattern for c in "0#?"):
        # A section of text only (`0;-0;"-"` shows "-" for zero); none at all: General.
        return "".join(prefix + suffix).strip() or general(value)
    number = value if signed else abs(value)
    body = _numeric(number * 100**percent, pattern)
    negative = body.startswith("-")
    text = "".join(prefix) + body.lstrip("-") + "".join(suffix)
    return ("-" + text if negative else text).strip()


def _numeric(value: float, pattern: str) -> str:
    """``value`` under a digit pattern: ``#,##0.00``, ``0.0E+00``, ``0,`` ..."""
    parts = re.split(r"([Ee][+-])", pattern, maxsplit=1)
    integer_pattern, point, decimal_pattern = parts[0].partition(".")
    # Trailing commas scale by a thousand each; a comma between digit placeholders groups thousands.
    stripped = integer_pattern.rstrip(",")
    scale = len(integer_pattern) - len(stripped)
    grouped = "," in stripped
    integer_digits = stripped.replace(",", "")
    decimal_pattern = decimal_pattern.replace(",", "")
    min_integer = integer_digits.count("0")
    max_decimals = sum(decimal_pattern.count(c) for c in "0#?")
    min_decimals = decimal_pattern.count("0")
    quantum = Decimal(1).scaleb(-max_decimals)
    # The 15 significant digits the spreadsheet keeps, then half away from zero, as it rounds.
    exact = Decimal(format(value, ".15g")).scaleb(-3 * scale)
    negative = exact < 0
    exact = abs(exact)
    exponent_text = ""
    if len(parts) == 3:
        shift = max(len(integer_digits), 1) - 1
        power = 0 if exact == 0 else exact.adjusted() - shift
        rounded = exact.scaleb(-power).quantize(quantum, rounding=ROUND_HALF_UP)
        if rounded >= 10 ** (shift + 1):
            power += 1
            rounded = exact.scaleb(-power).quantize(quantum, rounding=ROUND_HALF_UP)
        digits = max(1, parts[2].count("0"))
        exponent_sign = "-" if power < 0 else ("+" if parts[1].endswith("+") else "")
        exponent_text = f"E{exponent_sign}{str(abs(power)).rjust(digits, '0')}"
    else:
        rounded = exact.quantize(quantum, rounding=ROUND_HALF_UP)
    whole_digits, _, fraction = f"{rounded:f}".partition(".")
    fraction = fraction.ljust(max_decimals, "0")[:max_decimals]
    while len(fraction) > min_decimals and fraction.endswith("0"):
        fraction = fraction[:-1]
    whole_value = int(whole_digits)
    whole = (
        "" if whole_value == 0 and min_integer == 0 else (f"{whole_value:,}" if grouped else str(whole_value))
    )
    whole = whole.rjust(min_integer, "0")
    text = whole + ("." + fraction if point else "")
    sign = "-" if negative and rounded != 0 else ""
    return sign + text + exponent_text


# -- dates and times -----------------------------------------------------------------------------------


def _iso(value: dt.datetime | dt.date | dt.time | dt.timedelta) -> str:
    if isinstance(value, dt.timedelta):
        return _elapsed(value, "[h]:mm:ss")
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return value.replace(microsecond=0).isoformat(sep=" ")
    if isinstance(value, dt.time):
        return value.replace(microsecond=0).isoformat()
    return value.isoformat()


def _elapsed(value: dt.timedelta, code: str) -> str:
    return _date_text(_EPOCH + value, code, elapsed=value)


def _date_text(
    value: dt.datetime | dt.date | dt.time | dt.timedelta,
    code: str,
    *,
    elapsed: dt.timedelta | None = None,
) -> str:
    section = _sections(code)[0]
    tokens = _tokens(section)
    letters = "".join(text for kind, text in tokens if kind == "code").lower()
    if (
        not any(c in letters for c in "ydhs")
        and "m" not in letters
        and not any(
            kind == "bracket" and re.fullmatch(r"[hms]+", text, re.IGNORECASE) for kind, text in tokens
        )
    ):
        return _iso(value)
    if isinstance(value, dt.timedelta):
        elapsed = value
        moment = _EPOCH + value
    elif isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    else:
        moment = dt.datetime.combine(dt.date(1899, 12, 31), value)
    # Rebuild the section as a sequence of date tokens and literals.
    pieces: list[tuple[str, str]] = []
    for kind, text in tokens:
        if kind == "bracket":
            if re.fullmatch(r"[hms]+", text, re.IGNORECASE):
                pieces.append(("tok", f"[{text.lower()}]"))
            else:
                literal = _bracket_literal(text)
                if literal:
                    pieces.append(("lit", literal))
            continue
        if kind == "lit":
            pieces.append(("lit", text))
            continue
        pieces.append(("raw", text))
    raw = "".join(text if kind == "raw" else "\0" for kind, text in pieces)
    literals = [text for kind, text in pieces if kind != "raw"]
    out: list[tuple[str, str]] = []  # (token, literal) in order
    lit_iter = iter(literals)
    for chunk in re.split(r"(\0)", raw):
        if chunk == "\0":
            literal = next(lit_iter)
            out.append(("tok", literal) if literal.startswith("[") else ("lit", literal))
            continue
        position = 0
        for match in _DATE_TOKEN.finditer(chunk):
            if match.start() > position:
                out.append(("lit", chunk[position : match.start()]))
            out.append(("tok", match.group()))
            position = match.end()
        if position < len(chunk):
            out.append(("lit", chunk[position:]))
    twelve_hour = any(kind == "tok" and text.lower() in ("am/pm", "a/p") for kind, text in out)
    # The spreadsheet rounds to the last digit of seconds it shows (to the second without ss.0).
    shown = max((len(text.partition(".")[2]) for kind, text in out if kind == "tok"), default=0)
    step = 10 ** (6 - min(shown, 6))
    kept = (moment.microsecond + step // 2) // step * step
    moment = moment.replace(microsecond=0) + dt.timedelta(microseconds=kept)
    tokens_only = [text.lower() for kind, text in out if kind == "tok"]
    result: list[str] = []
    for index, (kind, text) in enumerate(out):
        if kind == "lit":
            result.append(text)
            continue
        token = text.lower()
        position = sum(1 for k, _ in out[:index] if k == "tok")
        if token.startswith("["):
            total = elapsed if elapsed is not None else moment - _EPOCH
            seconds = int(total.total_seconds())
            unit = token[1]
            amount = {"h": seconds // 3600, "m": seconds // 60, "s": seconds}[unit]
            result.append(str(amount).rjust(len(token) - 2, "0"))
        elif token[0] == "y" or token[0] == "e":
            result.append(str(moment.year)[-2:] if len(token) <= 2 and token[0] == "y" else str(moment.year))
        elif token[0] == "d":
            if len(token) >= 4:
                result.append(_DAYS[moment.weekday()])
            elif len(token) == 3:
                result.append(_DAYS[moment.weekday()][:3])
            else:
                result.append(str(moment.day).rjust(len(token), "0"))
        elif token[0] == "m":
            if _is_minute(tokens_only, position) and len(token) <= 2:
                result.append(str(moment.minute).rjust(len(token), "0"))
            elif len(token) >= 5:
                result.append(_MONTHS[moment.month - 1][0])
            elif len(token) == 4:
                result.append(_MONTHS[moment.month - 1])
            elif len(token) == 3:
                result.append(_MONTHS[moment.month - 1][:3])
            else:
                result.append(str(moment.month).rjust(len(token), "0"))
        elif token[0] == "h":
            hour = moment.hour
            if twelve_hour:
                hour = hour % 12 or 12
            result.append(str(hour).rjust(min(len(token), 2), "0"))
        elif token[0] == "s":
            whole, _, fraction = token.partition(".")
            result.append(str(moment.second).rjust(min(len(whole), 2), "0"))
            if fraction:
                digits = f"{moment.microsecond:06d}"[: len(fraction)]
                result.append("." + digits)
        elif token in ("am/pm", "a/p"):
            pm = moment.hour >= 12
            word = ("PM" if pm else "AM") if token == "am/pm" else ("P" if pm else "A")
            result.append(word if text[0].isupper() else word.lower())
    return "".join(result).strip()


def _is_minute(tokens: list[str], position: int) -> bool:
    """An ``m``/``mm`` is minutes right after an hour or right before a second (skipping literals)."""
    before = tokens[position - 1] if position > 0 else ""
    after = tokens[position + 1] if position + 1 < len(tokens) else ""
    return before[:1] in ("h",) or before.startswith("[h") or after[:1] == "s" or after.startswith("[s")
