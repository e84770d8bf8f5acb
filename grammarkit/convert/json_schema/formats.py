r"""The string ``format``\ s grammarkit enforces, as whole-string regular expressions.

Each follows its RFC's ABNF (RFC 3339 dates and times with real month lengths and leap years,
RFC 3986 URIs, RFC 3987 IRIs, RFC 4291 IPv6, RFC 6570 URI templates, RFC 6901 JSON pointers),
with two simplifications, both documented in ``docs/json-schema.md``: a leap second (``:60``) is
accepted in any minute, and a hostname's 253-character total is not enforced (its labels' 63 is).
Formats outside :data:`STRING_FORMATS` are annotations only and reported as such.
"""

from __future__ import annotations

from decimal import Decimal

_DIGIT = "[0-9]"
_HEX = "[0-9A-Fa-f]"

_LEAP_YEAR = (
    "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:00|0[48]|[2468][048]|[13579][26])00)"
)
_DATE = (
    "(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    "|02-(?:0[1-9]|1[0-9]|2[0-8]))"
    f"|{_LEAP_YEAR}-02-29)"
)
_TIME = (
    "(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\\.[0-9]+)?"
    "(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)
_DURATION_TIME = (
    "T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)"
)
_DURATION = (
    "P(?:(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)"
    f"(?:{_DURATION_TIME})?|{_DURATION_TIME}|[0-9]+W)"
)

_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = f"{_OCTET}(?:\\.{_OCTET}){{3}}"


def _ipv6() -> str:
    """RFC 4291 section 2.2 (RFC 3986's ABNF), with the seven forms ending in ``ls32``
    sharing one copy of it."""
    h16 = f"{_HEX}{{1,4}}"
    ls32 = f"(?:{h16}:{h16}|{_IPV4})"

    def groups(count: int) -> str:
        return f"(?:{h16}:){{{count}}}" if count else ""

    def head(most: int) -> str:
        return f"(?:(?:{h16}:){{0,{most}}}{h16})?" if most else f"(?:{h16})?"

    before_ls32 = [
        groups(6),
        f"::{groups(5)}",
        f"{head(0)}::{groups(4)}",
        f"{head(1)}::{groups(3)}",
        f"{head(2)}::{groups(2)}",
        f"{head(3)}::{groups(1)}",
        f"{head(4)}::",
    ]
    return (f"(?:(?:{'|'.join(before_ls32)}){ls32}|{head(5)}::{h16}|{head(6)}::)")


_IPV6 = _ipv6()

_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = f"{_LABEL}(?:\\.{_LABEL})*"

_ATOM_CHARS = "A-Za-z0-9!#$%&'*+/=?^_`{|}~-"
_EMAIL = (
    f"(?:[{_ATOM_CHARS}]+(?:\\.[{_ATOM_CHARS}]+)*"
    '|"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\x20-\\x7e])*")'
    f"@(?:{_HOSTNAME}|\\[{_IPV4}\\]|\\[IPv6:{_IPV6}\\])"
)

_UCSCHAR = (
    "\\u00a0-\\ud7ff\\uf900-\\ufdcf\\ufdf0-\\uffef"
    + "".join(
        f"\\u{{{plane:x}0000}}-\\u{{{plane:x}fffd}}" if plane else ""
        for plane in range(1, 15)
    )
    + "\\u{e1000}-\\u{efffd}"
)
_IPRIVATE = "\\ue000-\\uf8ff\\u{f0000}-\\u{ffffd}\\u{100000}-\\u{10fffd}"


def _uri(extra: str = "", private: str = "") -> tuple[str, str]:
    """The RFC 3986 URI and URI-reference grammars; ``extra`` widens ``unreserved`` (RFC 3987's
    ``ucschar``) and ``private`` the query characters, for IRIs."""
    pct = f"%{_HEX}{{2}}"
    unreserved = f"A-Za-z0-9._~\\-{extra}"
    sub_delims = "!$&'()*+,;="
    pchar = f"(?:[{unreserved}{sub_delims}:@]|{pct})"
    scheme = "[A-Za-z][A-Za-z0-9+.-]*"
    userinfo = f"(?:[{unreserved}{sub_delims}:]|{pct})*"
    ip_literal = f"\\[(?:{_IPV6}|v{_HEX}+\\.[A-Za-z0-9._~\\-{sub_delims}:]+)\\]"
    reg_name = f"(?:[{unreserved}{sub_delims}]|{pct})*"
    authority = f"(?:{userinfo}@)?(?:{ip_literal}|{reg_name})(?::[0-9]*)?"
    segment = f"{pchar}*"
    segment_nz = f"{pchar}+"
    segment_nz_nc = f"(?:[{unreserved}{sub_delims}@]|{pct})+"
    path_abempty = f"(?:/{segment})*"
    path_absolute = f"/(?:{segment_nz}(?:/{segment})*)?"
    path_rootless = f"{segment_nz}(?:/{segment})*"
    path_noscheme = f"{segment_nz_nc}(?:/{segment})*"
    query_char = f"(?:{pchar}|[/?{private}])" if private else f"(?:{pchar}|[/?])"
    query = f"(?:\\?{query_char}*)?"
    fragment = f"(?:#(?:{pchar}|[/?])*)?"
    hier_part = f"(?://{authority}{path_abempty}|{path_absolute}|{path_rootless}|)"
    relative_part = f"(?://{authority}{path_abempty}|{path_absolute}|{path_noscheme}|)"
    uri = f"{scheme}:{hier_part}{query}{fragment}"
    relative = f"{relative_part}{query}{fragment}"
    return uri, f"(?:{uri}|{relative})"


_URI, _URI_REFERENCE = _uri()
_IRI, _IRI_REFERENCE = _uri(_UCSCHAR, _IPRIVATE)


def _uri_template() -> str:
    pct = f"%{_HEX}{{2}}"
    literal = (
        "[\\x21\\x23\\x24\\x26\\x28-\\x3b\\x3d\\x3f-\\x5b\\x5d\\x5f\\x61-\\x7a\\x7e"
        f"{_UCSCHAR}{_IPRIVATE}]"
    )
    varchar = f"(?:[A-Za-z0-9_]|{pct})"
    varname = f"{varchar}(?:\\.?{varchar})*"
    varspec = f"{varname}(?::[1-9][0-9]{{0,3}}|\\*)?"
    expression = f"\\{{[+#./;?&=,!@|]?{varspec}(?:,{varspec})*\\}}"
    return f"(?:{literal}|{pct}|{expression})*"


_JSON_POINTER = "(?:/(?:[^~/]|~[01])*)*"

STRING_FORMATS: dict[str, str] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": f"{_DATE}[Tt]{_TIME}",
    "duration": _DURATION,
    "email": _EMAIL,
    "hostname": _HOSTNAME,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uri": _URI,
    "uri-reference": _URI_REFERENCE,
    "iri": _IRI,
    "iri-reference": _IRI_REFERENCE,
    "uri-template": _uri_template(),
    "uuid": f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}",
    "json-pointer": _JSON_POINTER,
    "relative-json-pointer": f"(?:0|[1-9][0-9]*)(?:#|{_JSON_POINTER})",
    "byte": "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?",
}
"""Enforced string formats: name to a regular expression the whole string must match. ``byte``
(base64) is OpenAPI's."""

UNCONSTRAINED_FORMATS = frozenset({"password", "binary", "float", "double"})
"""OpenAPI formats that describe a value without restricting it (UI hints, encodings)."""

NUMBER_FORMATS: dict[str, tuple[Decimal, Decimal]] = {
    "int32": (Decimal(-(2**31)), Decimal(2**31 - 1)),
    "int64": (Decimal(-(2**63)), Decimal(2**63 - 1)),
}
"""OpenAPI integer formats, as inclusive ranges (they apply to numbers)."""
