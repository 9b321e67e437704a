"""The held-out claims: like the subtle set (build_subtle_claims.py), each pair is a true claim
and a subtly false one on the same verbatim quote, but from code bases the other sets never
touch (httpx, attrs, rich, werkzeug, jinja2, h11, pydantic, packaging, markupsafe, urllib3,
itsdangerous, and stdlib modules other than shutil/os/genericpath/textwrap). Written without
looking at the checker, so it measures it rather than mirrors it. Writes
tests/fixtures/support/claims_heldout.jsonl in eval_support.py's row shape.

    python bench/build_heldout_claims.py

Each quote is found in the installed file (the build fails if it is not); the source is the
quote's lines and up to 8 lines either side, as retrieval would hand a chunk. The repository
field names the installed version, read from importlib.metadata.
"""

from __future__ import annotations

import platform
from collections import Counter
from importlib import metadata
from pathlib import Path

from build_subtle_claims import SITE, STDLIB, claim_row, write_claims

OUT = Path(__file__).parents[1] / "tests" / "fixtures" / "support" / "claims_heldout.jsonl"

# top-level directory in site-packages -> distribution name; anything else is the stdlib
DISTRIBUTIONS = {
    "httpx": "httpx",
    "attr": "attrs",
    "rich": "rich",
    "werkzeug": "werkzeug",
    "jinja2": "jinja2",
    "h11": "h11",
    "pydantic": "pydantic",
    "packaging": "packaging",
    "markupsafe": "markupsafe",
    "urllib3": "urllib3",
    "itsdangerous": "itsdangerous",
}
CLASSES = {
    "condition",
    "default",
    "precedence",
    "direction",
    "any_some",
    "number",
    "name",
    "negation",
    "meaning",
}

# (file, quote, question, true claim, false claim, class of the falsehood)
PAIRS: list[tuple[str, str, str, str, str, str]] = [
    # --- httpx ---
    (
        "httpx/_config.py",
        "DEFAULT_MAX_REDIRECTS = 20",
        "How many redirects will httpx follow?",
        "By default httpx allows up to 20 redirects.",
        "By default httpx allows up to 30 redirects.",
        "number",
    ),
    (
        "httpx/_config.py",
        "DEFAULT_LIMITS = Limits(max_connections=100, max_keepalive_connections=20)",
        "How big is httpx's default connection pool?",
        "The default limits set max_keepalive_connections to 20.",
        "The default limits set max_connections to 20.",
        "name",
    ),
    (
        "httpx/_config.py",
        "keepalive_expiry: float | None = 5.0,",
        "How long does httpx keep idle connections?",
        "Idle keep-alive connections expire after 5 seconds by default.",
        "By default idle keep-alive connections never expire.",
        "default",
    ),
    (
        "httpx/_client.py",
        "follow_redirects: bool = False,",
        "Does an httpx client follow redirects on its own?",
        "An httpx client does not follow redirects by default.",
        "An httpx client follows redirects by default.",
        "negation",
    ),
    (
        "httpx/_client.py",
        'if response.status_code == codes.MOVED_PERMANENTLY and method == "POST": method = "GET"',
        "What happens to the method when httpx follows a 301?",
        "Only a POST answered with a 301 is switched to GET.",
        "Every method except HEAD answered with a 301 is switched to GET.",
        "condition",
    ),
    (
        "httpx/_client.py",
        'if response.status_code == codes.SEE_OTHER and method != "HEAD": method = "GET"',
        "What does httpx do with a 303 See Other?",
        "On a 303, every method except HEAD is changed to GET.",
        "On a 303, only a POST is changed to GET.",
        "any_some",
    ),
    (
        "httpx/_client.py",
        "# We should use the client cookie store to determine any cookie header, "
        "# rather than whatever was on the original outgoing request. "
        'headers.pop("Cookie", None)',
        "Which cookies are sent on a redirected request?",
        "On a redirect the original Cookie header is dropped, so the client's cookie "
        "store decides the cookies.",
        "On a redirect the original Cookie header is kept instead of using the client's "
        "cookie store.",
        "meaning",
    ),
    (
        "httpx/_client.py",
        "if request.url.fragment and not url.fragment: "
        "url = url.copy_with(fragment=request.url.fragment)",
        "Does the URL fragment survive a redirect?",
        "The original fragment is carried over only when the redirect URL has no "
        "fragment of its own.",
        "The original fragment always replaces the fragment of the redirect URL.",
        "precedence",
    ),
    (
        "httpx/_client.py",
        "if len(history) > self.max_redirects:",
        "When does httpx raise TooManyRedirects?",
        "TooManyRedirects is raised only once the redirect history is longer than max_redirects.",
        "TooManyRedirects is raised as soon as the redirect history reaches max_redirects.",
        "condition",
    ),
    (
        "httpx/_config.py",
        'if url.scheme not in ("http", "https", "socks5", "socks5h"):',
        "Which proxy URL schemes does httpx accept?",
        "A proxy URL may use one of four schemes: http, https, socks5 or socks5h.",
        "A proxy URL may use one of three schemes: http, https or socks5.",
        "number",
    ),
    (
        "httpx/_client.py",
        "elif isinstance(auth, tuple): return BasicAuth(username=auth[0], password=auth[1])",
        "What does httpx do with auth=(user, password)?",
        "A (username, password) tuple passed as auth becomes BasicAuth.",
        "A (username, password) tuple passed as auth becomes DigestAuth.",
        "name",
    ),
    # --- attrs ---
    (
        "attr/_next_gen.py",
        "slots=True,",
        "Are attrs.define classes slotted?",
        "attrs.define makes slotted classes unless told otherwise.",
        "attrs.define makes classes without slots unless told otherwise.",
        "default",
    ),
    (
        "attr/_next_gen.py",
        "order=False,",
        "Can I compare define classes with < out of the box?",
        "attrs.define does not generate ordering methods by default.",
        "attrs.define generates ordering methods by default.",
        "negation",
    ),
    (
        "attr/_next_gen.py",
        "try: return do_it(cls, True) except UnannotatedAttributeError: return do_it(cls, False)",
        "How does define pick fields when auto_attribs is not given?",
        "With auto_attribs unset, define first tries annotation-based fields and falls "
        "back when an attribute has no annotation.",
        "With auto_attribs unset, define first tries fields without annotations and "
        "falls back to annotation-based fields.",
        "precedence",
    ),
    (
        "attr/_next_gen.py",
        "# By default, mutable classes convert & validate on setattr. "
        "if frozen is False and on_setattr is None: on_setattr = _DEFAULT_ON_SETATTR",
        "Do validators run when I assign to a field of a define class?",
        "For a mutable class with no explicit on_setattr, define runs converters and "
        "validators on assignment.",
        "For a frozen class with no explicit on_setattr, define runs converters and "
        "validators on assignment.",
        "condition",
    ),
    (
        "attr/validators.py",
        "if value is None: return self.validator(inst, attr, value)",
        "What does validators.optional do with None?",
        "validators.optional skips the wrapped validator when the value is None.",
        "validators.optional passes None on to the wrapped validator.",
        "meaning",
    ),
    (
        "attr/validators.py",
        "for member in value: self.member_validator(inst, attr, member)",
        "Which members does deep_iterable check?",
        "deep_iterable runs the member validator on every member of the value.",
        "deep_iterable runs the member validator only on the first member of the value.",
        "any_some",
    ),
    (
        "attr/validators.py",
        "if len(value) < self.min_length:",
        "When does min_len fail?",
        "min_len raises ValueError when the value is shorter than the minimum length.",
        "min_len raises ValueError when the value is longer than the minimum length.",
        "direction",
    ),
    (
        "attr/converters.py",
        "if default is not NOTHING and factory is not None: "
        'msg = "Must pass either `default` or `factory` but not both." raise TypeError(msg)',
        "Can default_if_none take both default and factory?",
        "Passing both default and factory to default_if_none raises TypeError.",
        "Passing both default and factory to default_if_none raises ValueError.",
        "name",
    ),
    # --- rich ---
    (
        "rich/console.py",
        "JUPYTER_DEFAULT_COLUMNS = 115",
        "How wide is a rich console in Jupyter?",
        "rich's default Jupyter width is 115 columns.",
        "rich's default Jupyter width is 120 columns.",
        "number",
    ),
    (
        "rich/console.py",
        'force_color = environ.get("FORCE_COLOR") if force_color is not None: '
        'return force_color != ""',
        "Does an empty FORCE_COLOR force terminal output?",
        "FORCE_COLOR forces terminal mode only when it is non-empty; set but empty, it "
        "turns terminal mode off.",
        "FORCE_COLOR forces terminal mode whenever it is set, even to an empty string.",
        "condition",
    ),
    (
        "rich/console.py",
        'if tty_compatible == "1": return True # https://force-color.org/ '
        'force_color = environ.get("FORCE_COLOR")',
        "Which wins, TTY_COMPATIBLE or FORCE_COLOR?",
        "TTY_COMPATIBLE is checked before FORCE_COLOR.",
        "FORCE_COLOR is checked before TTY_COMPATIBLE.",
        "precedence",
    ),
    (
        "rich/console.py",
        "# get_terminal_size can report 0, 0 if run from pseudo-terminal "
        "width = width or 80 height = height or 25",
        "What size does rich assume when the terminal reports none?",
        "If the detected size is zero, rich falls back to 80 columns by 25 lines.",
        "If the detected size is zero, rich falls back to 120 columns by 25 lines.",
        "default",
    ),
    (
        "rich/console.py",
        'no_color if no_color is not None else self._environ.get("NO_COLOR", "") != ""',
        "Does NO_COLOR override the no_color argument?",
        "An explicit no_color argument wins over the NO_COLOR environment variable.",
        "The NO_COLOR environment variable wins over an explicit no_color argument.",
        "precedence",
    ),
    (
        "rich/cells.py",
        "if len(text) < 512: return cached_cell_len(text, unicode_version)",
        "Does cell_len cache its results?",
        "cell_len uses the cached path only for strings shorter than 512 characters.",
        "cell_len uses the cached path only for strings longer than 512 characters.",
        "direction",
    ),
    (
        "rich/cells.py",
        'if size < total: return text + " " * (total - size) return text[:total]',
        "How does set_cell_size fit plain text to a width?",
        "set_cell_size pads short text with spaces on the right and cuts long text at the end.",
        "set_cell_size pads short text with spaces on the left and cuts long text at the end.",
        "direction",
    ),
    (
        "rich/filesize.py",
        'if size == 1: return "1 byte" elif size < base: return f"{size:,} bytes"',
        "How does rich show small file sizes?",
        "Sizes below the base are shown as a plain count of bytes.",
        "Sizes below the base are shown in kB with one decimal place.",
        "meaning",
    ),
    (
        "rich/filesize.py",
        '("kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"), 1000,',
        "Does filesize.decimal use 1000 or 1024?",
        "filesize.decimal works in powers of 1000.",
        "filesize.decimal works in powers of 1024.",
        "number",
    ),
    (
        "rich/_ratio.py",
        "if remaining <= 0: # No room for flexible edges return [ "
        "((edge.minimum_size or 1) if size is None else size)",
        "What size do flexible layout edges get when there is no room?",
        "With no space left, each flexible edge gets its minimum_size, or 1 if it has none.",
        "With no space left, each flexible edge gets its minimum_size, or 0 if it has none.",
        "default",
    ),
    # --- werkzeug ---
    (
        "werkzeug/security.py",
        'password: str, method: str = "scrypt", salt_length: int = 16',
        "How does generate_password_hash hash by default?",
        "generate_password_hash defaults to scrypt with a 16-character salt.",
        "generate_password_hash defaults to pbkdf2 with a 16-character salt.",
        "default",
    ),
    (
        "werkzeug/security.py",
        "DEFAULT_PBKDF2_ITERATIONS = 1_000_000",
        "How many pbkdf2 iterations does werkzeug use?",
        "Without an explicit count, pbkdf2 hashing uses 1,000,000 iterations.",
        "Without an explicit count, pbkdf2 hashing uses 600,000 iterations.",
        "number",
    ),
    (
        "werkzeug/security.py",
        'try: method, salt, hashval = pwhash.split("$", 2) except ValueError: return False',
        "What happens when the stored hash is malformed?",
        "A stored hash that does not split into three dollar-separated parts makes "
        "check_password_hash return False.",
        "A stored hash that does not split into three dollar-separated parts makes "
        "check_password_hash raise ValueError.",
        "meaning",
    ),
    (
        "werkzeug/security.py",
        "return hmac.compare_digest(_hash_internal(method, salt, password)[0], hashval)",
        "Is the password comparison constant-time?",
        "check_password_hash compares the hashes with hmac.compare_digest.",
        "check_password_hash compares the hashes with hashlib.compare_digest.",
        "name",
    ),
    (
        "werkzeug/security.py",
        "n = 2**15 r = 8 p = 1",
        "What scrypt parameters does werkzeug use by default?",
        "Without parameters, scrypt runs with n=2**15, r=8 and p=1.",
        "Without parameters, scrypt runs with n=2**14, r=8 and p=1.",
        "number",
    ),
    (
        "werkzeug/utils.py",
        'filename = unicodedata.normalize("NFKD", filename) '
        'filename = filename.encode("ascii", "ignore").decode("ascii")',
        "What does secure_filename do with non-ASCII characters?",
        "After NFKD normalisation, secure_filename drops any character that is not ASCII.",
        "After NFKD normalisation, secure_filename replaces each non-ASCII character "
        "with an underscore.",
        "meaning",
    ),
    (
        "werkzeug/utils.py",
        'filename = str(_filename_ascii_strip_re.sub("", "_".join(filename.split()))).strip( '
        '"._" )',
        "How does secure_filename treat spaces and leading dots?",
        "secure_filename joins the words with underscores and strips dots and "
        "underscores from both ends.",
        "secure_filename joins the words with underscores and strips dots and "
        "underscores from the start only.",
        "direction",
    ),
    (
        "werkzeug/utils.py",
        'if ( os.name == "nt" and filename and '
        'filename.split(".")[0].upper() in _windows_device_files ): '
        'filename = f"_{filename}"',
        "What does secure_filename do with names like CON.txt?",
        "On Windows, a name whose stem is a device name gets an underscore in front.",
        "On every operating system, a name whose stem is a device name gets an "
        "underscore in front.",
        "condition",
    ),
    (
        "werkzeug/datastructures/structures.py",
        "if len(lst) > 0:  # type: ignore[arg-type] "
        "return lst[0]  # type: ignore[index,no-any-return]",
        "Which value does MultiDict[key] return when a key has several?",
        "Indexing a MultiDict returns the first value stored for the key.",
        "Indexing a MultiDict returns the last value stored for the key.",
        "direction",
    ),
    # --- jinja2 ---
    (
        "jinja2/filters.py",
        "if isinstance(value, Undefined) or (boolean and not value): return default_value",
        "Does the default filter replace an empty string?",
        "default replaces a defined but falsy value only when boolean is true.",
        "default replaces any falsy value, such as an empty string, even when boolean is false.",
        "condition",
    ),
    (
        "jinja2/filters.py",
        'default_value: V = "",  # type: ignore',
        "What does the default filter output with no argument?",
        "With no argument, the default filter substitutes an empty string.",
        "With no argument, the default filter substitutes None.",
        "default",
    ),
    (
        "jinja2/filters.py",
        "base = 1024 if binary else 1000",
        "Does filesizeformat use 1000 or 1024?",
        "filesizeformat uses a base of 1000 unless binary is true.",
        "filesizeformat uses a base of 1024 unless binary is true.",
        "condition",
    ),
    (
        "jinja2/filters.py",
        "s: str, width: t.Union[int, str] = 4, first: bool = False, blank: bool = False",
        "Does the indent filter indent the first line?",
        "By default the indent filter does not indent the first line.",
        "By default the indent filter indents the first line too.",
        "negation",
    ),
    (
        "jinja2/filters.py",
        "indention + line if line else line for line in lines",
        "Which lines does indent prefix when blank is false?",
        "Unless blank is set, indent skips empty lines and indents only the non-empty "
        "lines after the first.",
        "Unless blank is set, indent indents every line after the first, empty ones included.",
        "any_some",
    ),
    (
        "jinja2/filters.py",
        'result = s[: length - len(end)].rsplit(" ", 1)[0] return result + end',
        "Where does truncate cut when killwords is false?",
        "Without killwords, truncate cuts back to the last space before the limit and "
        "adds the end marker.",
        "Without killwords, truncate cuts back to the first space before the limit and "
        "adds the end marker.",
        "direction",
    ),
    (
        "jinja2/filters.py",
        "length: int = 255,",
        "How long is a truncated string by default?",
        "truncate's default length is 255.",
        "truncate's default length is 256.",
        "number",
    ),
    (
        "jinja2/filters.py",
        "return next(iter(reversed(seq)))",
        "Can the last filter take a generator?",
        "last takes the first item of the reversed sequence, so it needs a reversible "
        "sequence rather than a generator.",
        "last walks the whole sequence and keeps the final item, so it works with generators.",
        "meaning",
    ),
    (
        "jinja2/filters.py",
        "if fill_with is not None and len(tmp) < linecount: "
        "tmp += [fill_with] * (linecount - len(tmp))",
        "Is the last batch padded?",
        "The last short batch is padded only when fill_with is given.",
        "The last short batch is always padded, with None when fill_with is not given.",
        "condition",
    ),
    (
        "jinja2/filters.py",
        'method: \'te.Literal["common", "ceil", "floor"]\' = "common",',
        "How does the round filter round by default?",
        "The round filter uses the common method unless told otherwise.",
        "The round filter uses the floor method unless told otherwise.",
        "default",
    ),
    (
        "jinja2/filters.py",
        "func = getattr(math, method)",
        "How does round implement ceil and floor?",
        "For ceil and floor, round calls the math function of that name.",
        "For ceil and floor, round calls the decimal function of that name.",
        "name",
    ),
    # --- h11 ---
    (
        "h11/_connection.py",
        "DEFAULT_MAX_INCOMPLETE_EVENT_SIZE = 16 * 1024",
        "How much unparsed data does h11 buffer?",
        "By default h11 allows incomplete events of up to 16 KiB.",
        "By default h11 allows incomplete events of up to 64 KiB.",
        "number",
    ),
    (
        "h11/_connection.py",
        'if b"close" in connection: return False '
        'if getattr(event, "http_version", b"1.1") < b"1.1": return False',
        "When does h11 decide not to keep the connection alive?",
        "Keep-alive is off if the Connection header says close or the HTTP version is below 1.1.",
        "Keep-alive is off only if the Connection header says close and the HTTP "
        "version is below 1.1.",
        "any_some",
    ),
    (
        "h11/_connection.py",
        "# - HTTP/1.0 defaults to close unless both sides say Connection: keep-alive",
        "What do h11's notes say about HTTP/1.0 keep-alive?",
        "HTTP/1.0 closes the connection unless both sides send Connection: keep-alive.",
        "HTTP/1.0 closes the connection unless either side sends Connection: keep-alive.",
        "any_some",
    ),
    (
        "h11/_connection.py",
        'event.status_code in (204, 304) or request_method == b"HEAD"',
        "Which responses never have a body?",
        "Responses with status 204 or 304, and responses to HEAD, get a zero content length.",
        "Responses with status 204 or 404, and responses to HEAD, get a zero content length.",
        "number",
    ),
    (
        "h11/_connection.py",
        "# Step 2: check for Transfer-Encoding (T-E beats C-L):",
        "If both Transfer-Encoding and Content-Length are sent, which one frames the body?",
        "Transfer-Encoding takes priority over Content-Length.",
        "Content-Length takes priority over Transfer-Encoding.",
        "precedence",
    ),
    (
        "h11/_headers.py",
        'lengths = {length.strip() for length in value.split(b",")} '
        'if len(lengths) != 1: raise LocalProtocolError("conflicting Content-Length headers")',
        "Does h11 accept a Content-Length like '5, 5'?",
        "A comma-separated Content-Length is accepted only when all its values are the same.",
        "A comma-separated Content-Length is accepted when any one of its values is valid.",
        "any_some",
    ),
    (
        "h11/_headers.py",
        'value = value.lower() if value != b"chunked":',
        "Is Transfer-Encoding matched case-insensitively?",
        "h11 lower-cases the Transfer-Encoding value before requiring it to be chunked.",
        "h11 requires the Transfer-Encoding value to be chunked without lower-casing it.",
        "negation",
    ),
    (
        "h11/_headers.py",
        "found_split_value = found_split_value.strip() "
        "if found_split_value: out.append(found_split_value)",
        "What does get_comma_header do with empty items?",
        "get_comma_header strips each item and skips the empty ones.",
        "get_comma_header strips each item but does not skip the empty ones.",
        "negation",
    ),
    (
        "h11/_headers.py",
        'if request.http_version < b"1.1": return False '
        'expect = get_comma_header(request.headers, b"expect")',
        "Is Expect: 100-continue honoured for HTTP/1.0?",
        "has_expect_100_continue ignores the Expect header on requests older than HTTP/1.1.",
        "has_expect_100_continue ignores the Expect header on requests newer than HTTP/1.1.",
        "direction",
    ),
    (
        "h11/_headers.py",
        "if saw_transfer_encoding: raise LocalProtocolError( "
        '"multiple Transfer-Encoding headers", error_status_hint=501 )',
        "What happens when a message has two Transfer-Encoding headers?",
        "A second Transfer-Encoding header raises LocalProtocolError.",
        "A second Transfer-Encoding header raises RemoteProtocolError.",
        "name",
    ),
    # --- pydantic ---
    (
        "pydantic/_internal/_config.py",
        "allow_inf_nan=True,",
        "Does pydantic accept inf and NaN floats by default?",
        "By default the model config allows inf and NaN.",
        "By default the model config rejects inf and NaN.",
        "default",
    ),
    (
        "pydantic/_internal/_config.py",
        "protected_namespaces=('model_validate', 'model_dump'),",
        "Which field names does pydantic protect by default?",
        "By default only names starting with model_validate or model_dump are protected.",
        "By default every name starting with model_ is protected.",
        "any_some",
    ),
    (
        "pydantic/_internal/_config.py",
        "config_new.update(config_from_namespace) for k in list(kwargs.keys()): "
        "if k in config_keys: config_new[k] = kwargs.pop(k)",
        "Do class keyword arguments or model_config win?",
        "Config keys passed as class keyword arguments override the ones in model_config.",
        "model_config overrides config keys passed as class keyword arguments.",
        "precedence",
    ),
    (
        "pydantic/_internal/_config.py",
        "if config_class_from_namespace and config_dict_from_namespace: "
        'raise PydanticUserError(\'"Config" and "model_config" cannot be used together\', '
        "code='config-both')",
        "Can a model have both a Config class and model_config?",
        "Defining both a Config class and model_config raises PydanticUserError.",
        "Defining both a Config class and model_config lets model_config take priority.",
        "meaning",
    ),
    (
        "pydantic/_internal/_config.py",
        "for base in bases: config = getattr(base, 'model_config', None) "
        "if config: config_new.update(config.copy())",
        "How are the configs of several base classes combined?",
        "The bases' configs are merged in order, so a later base overrides an earlier one.",
        "The bases' configs are merged in order, so an earlier base overrides a later one.",
        "direction",
    ),
    (
        "pydantic/alias_generators.py",
        "camel = to_pascal(snake) return re.sub('(^_*[A-Z])', lambda m: m.group(1).lower(), camel)",
        "How does to_camel build its result?",
        "to_camel converts with to_pascal and then lower-cases the leading capital.",
        "to_camel converts with to_snake and then lower-cases the leading capital.",
        "name",
    ),
    (
        "pydantic/alias_generators.py",
        "snake = snake.replace('-', '_') return snake.lower()",
        "Does to_snake handle kebab-case?",
        "to_snake turns hyphens into underscores and lower-cases the result.",
        "to_snake turns underscores into hyphens and lower-cases the result.",
        "direction",
    ),
    (
        "pydantic/alias_generators.py",
        r"if re.match('^[a-z]+[A-Za-z0-9]*$', snake) and not re.search(r'\d[a-z]', snake): "
        "return snake",
        "Does to_camel leave camelCase input alone?",
        "to_camel returns camelCase input unchanged, unless a digit is followed by a "
        "lower-case letter.",
        "to_camel returns camelCase input unchanged, even when a digit is followed by a "
        "lower-case letter.",
        "negation",
    ),
    # --- packaging ---
    (
        "packaging/utils.py",
        'value = name.lower().replace("_", "-").replace(".", "-")',
        "How does canonicalize_name normalise separators?",
        "canonicalize_name lower-cases the name and turns underscores and dots into hyphens.",
        "canonicalize_name lower-cases the name and turns hyphens and dots into underscores.",
        "direction",
    ),
    (
        "packaging/utils.py",
        'while "--" in value: value = value.replace("--", "-")',
        "What happens to repeated separators in a package name?",
        "canonicalize_name collapses every run of hyphens into a single hyphen.",
        "canonicalize_name collapses only the first run of hyphens into a single hyphen.",
        "any_some",
    ),
    (
        "packaging/utils.py",
        "if validate and not _validate_regex.fullmatch(name): "
        'raise InvalidName(f"name is invalid: {name!r}")',
        "What does canonicalize_name raise for a bad name?",
        "With validate on, an invalid name raises InvalidName.",
        "With validate on, an invalid name raises InvalidVersion.",
        "name",
    ),
    (
        "packaging/utils.py",
        "version: Version | str, *, strip_trailing_zero: bool = True",
        "Does canonicalize_version keep trailing zeros?",
        "canonicalize_version strips trailing zeros by default.",
        "canonicalize_version keeps trailing zeros by default.",
        "default",
    ),
    (
        "packaging/utils.py",
        "except InvalidVersion: return str(version)",
        "What does canonicalize_version do with an unparsable version?",
        "canonicalize_version returns an unparsable version string unchanged.",
        "canonicalize_version raises InvalidVersion for an unparsable version string.",
        "meaning",
    ),
    (
        "packaging/version.py",
        "return self.dev is not None or self.pre is not None",
        "Does a dev release count as a pre-release?",
        "A version is a pre-release if it has a dev segment or a pre segment.",
        "A version is a pre-release only if it has both a dev segment and a pre segment.",
        "any_some",
    ),
    (
        "packaging/version.py",
        "return self.release[2] if len(self.release) >= 3 else 0",
        "What is micro for a version like 1.2?",
        "micro is 0 when the release has fewer than three parts.",
        "micro is None when the release has fewer than three parts.",
        "default",
    ),
    (
        "packaging/specifiers.py",
        "# If there is an explicit prereleases set for this, then we'll just "
        "# blindly use that. if self._prereleases is not None: return self._prereleases",
        "Does an explicit prereleases setting beat the specifier's own version?",
        "An explicitly set prereleases value takes priority over what the specifier implies.",
        "What the specifier implies takes priority over an explicitly set prereleases value.",
        "precedence",
    ),
    (
        "packaging/specifiers.py",
        '# Only the "!=" operator does not imply prereleases when '
        "# the version in the specifier is a prerelease. "
        'operator, version_str = self._spec if operator == "!=": return False',
        "Does a specifier on a pre-release version allow pre-releases?",
        "A != specifier never implies pre-releases, even if its version is a pre-release.",
        "A == specifier never implies pre-releases, even if its version is a pre-release.",
        "condition",
    ),
    (
        "packaging/specifiers.py",
        "# Compatible releases have an equivalent combination of >= and ==. That "
        "# is that ~=2.2 is equivalent to >=2.2,==2.*.",
        "What does ~=2.2 mean?",
        "~=2.2 is treated as >=2.2 together with ==2.*.",
        "~=2.2 is treated as >=2.2 together with ==2.2.*.",
        "number",
    ),
    (
        "packaging/specifiers.py",
        '# The spec says: "<V MUST NOT allow a pre-release of the specified '
        '# version unless the specified version is itself a pre-release."',
        "Does <2.0 match 2.0rc1?",
        "<V rejects pre-releases of V itself, unless V is a pre-release.",
        "<V accepts pre-releases of V itself, unless V is a pre-release.",
        "negation",
    ),
    # --- markupsafe ---
    (
        "markupsafe/__init__.py",
        "if type(s) is str: return Markup(_escape_inner(s)) "
        'if hasattr(s, "__html__"): return Markup(s.__html__())',
        "Is __html__ checked for plain strings?",
        "escape handles a plain str directly, before any check for __html__.",
        "escape checks for __html__ first, even for a plain str.",
        "precedence",
    ),
    (
        "markupsafe/__init__.py",
        "if s is None: return Markup()",
        "What does escape_silent do with None?",
        "escape_silent turns None into an empty Markup string.",
        "escape_silent turns None into Markup('None').",
        "meaning",
    ),
    (
        "markupsafe/__init__.py",
        "return self.__class__(super().__add__(self.escape(value)))",
        "Is a str added to Markup escaped?",
        "Adding a str to a Markup escapes the str before joining.",
        "Adding a str to a Markup joins the str without escaping it.",
        "negation",
    ),
    (
        "markupsafe/_native.py",
        """.replace("'", "&#39;") .replace('"', "&#34;")""",
        "How are quotes escaped by markupsafe's Python fallback?",
        "A single quote becomes &#39; and a double quote becomes &#34;.",
        "A single quote becomes &#34; and a double quote becomes &#39;.",
        "number",
    ),
    (
        "markupsafe/_native.py",
        'return ( s.replace("&", "&amp;") .replace(">", "&gt;")',
        "Can escaping double-escape its own entities?",
        "The ampersand is replaced first, so entities added afterwards are not escaped again.",
        "The ampersand is replaced last, so entities added before it are not escaped again.",
        "direction",
    ),
    (
        "markupsafe/__init__.py",
        'value = " ".join(value.split()) return self.__class__(value).unescape()',
        "In what order does striptags clean up text?",
        "striptags collapses whitespace first and unescapes entities last.",
        "striptags unescapes entities first and collapses whitespace last.",
        "precedence",
    ),
    (
        "markupsafe/__init__.py",
        'if (end := value.find("-->", start)) == -1: break',
        "What does striptags do with an unclosed comment?",
        "If a comment has no closing -->, striptags stops looking for further comments.",
        "If a comment has no closing -->, striptags skips it and keeps looking for later comments.",
        "meaning",
    ),
    (
        "markupsafe/__init__.py",
        'if hasattr(object, "__html__"): object = object.__html__()',
        "What does Markup() do with an object that knows its HTML?",
        "Markup() replaces an object that has __html__ with the result of calling __html__.",
        "Markup() replaces an object that has __html__ with the result of calling __html_format__.",
        "name",
    ),
    # --- urllib3 ---
    (
        "urllib3/util/retry.py",
        'DEFAULT_ALLOWED_METHODS = frozenset( ["HEAD", "GET", "PUT", "DELETE", '
        '"OPTIONS", "TRACE"] )',
        "Does urllib3 retry POST requests by default?",
        "POST is not in the default set of retryable methods.",
        "POST is in the default set of retryable methods.",
        "negation",
    ),
    (
        "urllib3/util/retry.py",
        "RETRY_AFTER_STATUS_CODES = frozenset([413, 429, 503])",
        "For which statuses does urllib3 honour Retry-After?",
        "Retry-After is honoured for 413, 429 and 503.",
        "Retry-After is honoured for 429, 500 and 503.",
        "number",
    ),
    (
        "urllib3/util/retry.py",
        "DEFAULT_REMOVE_HEADERS_ON_REDIRECT = frozenset( "
        '["Cookie", "Authorization", "Proxy-Authorization"] )',
        "Which headers does urllib3 drop on redirect?",
        "By default Cookie, Authorization and Proxy-Authorization are removed on redirect.",
        "By default only the Authorization header is removed on redirect.",
        "any_some",
    ),
    (
        "urllib3/util/retry.py",
        "total: bool | int | None = 10,",
        "How many retries does a default Retry allow?",
        "A Retry allows 10 retries in total by default.",
        "A Retry allows 3 retries in total by default.",
        "default",
    ),
    (
        "urllib3/util/retry.py",
        "if consecutive_errors_len <= 1: return 0",
        "When does urllib3 start backing off?",
        "No backoff is applied until there have been at least two consecutive errors.",
        "Backoff already applies after a single error.",
        "condition",
    ),
    (
        "urllib3/util/retry.py",
        "return float(max(0, min(self.backoff_max, backoff_value)))",
        "How long can the backoff get?",
        "The backoff time never exceeds backoff_max.",
        "The backoff time is never below backoff_max.",
        "direction",
    ),
    (
        "urllib3/util/retry.py",
        "takewhile(lambda x: x.redirect_location is None, reversed(self.history))",
        "Which past errors count toward the backoff?",
        "Only the most recent run of non-redirect entries in the history counts toward "
        "the backoff.",
        "Every non-redirect entry in the history counts toward the backoff.",
        "any_some",
    ),
    (
        "urllib3/util/retry.py",
        "if self.respect_retry_after_header and response: "
        "slept = self.sleep_for_retry(response) if slept: return self._sleep_backoff()",
        "Does urllib3 use Retry-After or its own backoff?",
        "A Retry-After sleep, when one happens, takes the place of the exponential backoff.",
        "The exponential backoff takes the place of a Retry-After sleep.",
        "precedence",
    ),
    (
        "urllib3/util/retry.py",
        "if self.status_forcelist and status_code in self.status_forcelist: return True",
        "Does status_forcelist need a Retry-After header?",
        "A status in status_forcelist is retried without needing a Retry-After header.",
        "A status in status_forcelist is retried only when a Retry-After header is present.",
        "condition",
    ),
    (
        "urllib3/util/retry.py",
        "return min(retry_counts) < 0",
        "When are retries exhausted?",
        "Retries are exhausted as soon as any active counter drops below zero.",
        "Retries are exhausted only when every active counter is below zero.",
        "any_some",
    ),
    (
        "urllib3/util/retry.py",
        "DEFAULT_BACKOFF_MAX = 120",
        "What is the longest backoff urllib3 waits?",
        "The backoff is capped at 120 seconds by default.",
        "The backoff is capped at 60 seconds by default.",
        "number",
    ),
    (
        "urllib3/util/retry.py",
        "if isinstance(err, ProxyError): err = err.original_error "
        "return isinstance(err, ConnectTimeoutError)",
        "Which errors count as connection errors for retries?",
        "A connection error is a ConnectTimeoutError, after unwrapping a ProxyError.",
        "A connection error is a ReadTimeoutError, after unwrapping a ProxyError.",
        "name",
    ),
    # --- itsdangerous ---
    (
        "itsdangerous/signer.py",
        "for secret_key in reversed(self.secret_keys):",
        "In what order are rotated keys tried when verifying?",
        "verify_signature tries the secret keys from the last in the list back to the first.",
        "verify_signature tries the secret keys from the first in the list to the last.",
        "direction",
    ),
    (
        "itsdangerous/signer.py",
        'bytes, self.digest_method(self.salt + b"signer" + secret_key).digest()',
        "How is the key derived with django-concat?",
        'With django-concat the key is the digest of the salt, then b"signer", then the '
        "secret key.",
        'With django-concat the key is the digest of the secret key, then b"signer", '
        "then the salt.",
        "precedence",
    ),
    (
        "itsdangerous/signer.py",
        'default_key_derivation: str = "django-concat"',
        "Which key derivation does Signer use?",
        "Signer derives its key with django-concat by default.",
        "Signer derives its key with hmac by default.",
        "default",
    ),
    (
        "itsdangerous/signer.py",
        "value, sig = signed_value.rsplit(self.sep, 1)",
        "Can the signed value contain the separator?",
        "unsign splits at the last separator, so the value may itself contain the separator.",
        "unsign splits at the first separator, so the value may itself contain the separator.",
        "direction",
    ),
    (
        "itsdangerous/timed.py",
        "if age < 0: raise SignatureExpired(",
        "What happens with a timestamp from the future?",
        "When max_age is given, a signature dated in the future also raises SignatureExpired.",
        "When max_age is given, a signature dated in the future is accepted as valid.",
        "meaning",
    ),
    (
        "itsdangerous/timed.py",
        "if age > max_age:",
        "Is a signature exactly max_age seconds old still valid?",
        "When max_age is given, a signature exactly max_age seconds old is still accepted.",
        "When max_age is given, a signature exactly max_age seconds old is rejected as expired.",
        "condition",
    ),
    (
        "itsdangerous/encoding.py",
        'return base64.urlsafe_b64encode(string).rstrip(b"=")',
        "Does itsdangerous keep base64 padding?",
        "base64_encode strips the trailing = padding.",
        "base64_encode does not strip the trailing = padding.",
        "negation",
    ),
    (
        "itsdangerous/signer.py",
        "if self.sep in _base64_alphabet: raise ValueError(",
        "Which separators can a Signer use?",
        "A separator that could appear in the base64 signature is rejected with ValueError.",
        "A separator that could appear in the base64 signature is rejected with TypeError.",
        "name",
    ),
    # --- the standard library ---
    (
        "json/__init__.py",
        "def dumps(obj, *, skipkeys=False, ensure_ascii=True, check_circular=True,",
        "Does json.dumps escape non-ASCII text?",
        "json.dumps escapes non-ASCII characters by default.",
        "json.dumps writes non-ASCII characters unescaped by default.",
        "default",
    ),
    (
        "json/encoder.py",
        "if separators is not None: self.item_separator, self.key_separator = separators "
        "elif indent is not None: self.item_separator = ','",
        "Do explicit separators or indent decide the item separator?",
        "Explicit separators win over the item separator that indent would choose.",
        "The item separator that indent would choose wins over explicit separators.",
        "precedence",
    ),
    (
        "functools.py",
        "def lru_cache(maxsize=128, typed=False):",
        "How many entries does lru_cache keep by default?",
        "lru_cache keeps 128 entries by default.",
        "lru_cache keeps 256 entries by default.",
        "number",
    ),
    (
        "functools.py",
        "# Negative maxsize is treated as 0 if maxsize < 0: maxsize = 0",
        "What does lru_cache do with a negative maxsize?",
        "A negative maxsize is treated as zero.",
        "A negative maxsize is treated as unbounded.",
        "meaning",
    ),
    (
        "collections/__init__.py",
        "return sorted(self.items(), key=_itemgetter(1), reverse=True)",
        "In what order does most_common list all counts?",
        "With n left as None, most_common lists the counts in descending order.",
        "With n left as None, most_common lists the counts in ascending order.",
        "direction",
    ),
    (
        "collections/__init__.py",
        "return heapq.nlargest(n, self.items(), key=_itemgetter(1))",
        "How does most_common(n) pick the top n?",
        "most_common(n) picks the top n counts with heapq.nlargest.",
        "most_common(n) picks the top n counts with heapq.nsmallest.",
        "name",
    ),
    (
        "urllib/parse.py",
        "if not base: return url if not url: return base",
        "What does urljoin return for an empty url?",
        "If url is empty, urljoin returns the base unchanged.",
        "If url is empty, urljoin returns an empty string.",
        "meaning",
    ),
    (
        "argparse.py",
        "if long_option_strings: dest_option_string = long_option_strings[0] "
        "else: dest_option_string = option_strings[0]",
        "How does argparse name the attribute for an option?",
        "The dest comes from the first long option, or from the first option string "
        "when there is no long one.",
        "The dest comes from the first option string, even when a long option is given.",
        "precedence",
    ),
    (
        "argparse.py",
        "allow_abbrev=True,",
        "Does argparse accept abbreviated long options?",
        "ArgumentParser accepts abbreviated long options by default.",
        "ArgumentParser does not accept abbreviated long options by default.",
        "negation",
    ),
    (
        "argparse.py",
        "if len(option_string) > 1 and option_string[1] in self.prefix_chars:",
        "What makes an option string a long option?",
        "An option string is long when its second character is also a prefix character.",
        "An option string is long when it has more than two characters.",
        "condition",
    ),
    (
        "csv.py",
        "if lf < lr: d[self.restkey] = row[lf:]",
        "What does DictReader do with extra fields in a row?",
        "Fields beyond the fieldnames are collected in a list under restkey.",
        "Fields beyond the fieldnames are silently dropped.",
        "meaning",
    ),
    (
        "csv.py",
        "while row == []: row = next(self.reader)",
        "Does DictReader return blank rows?",
        "DictReader skips every empty row instead of returning it.",
        "DictReader skips only the first empty row it meets.",
        "any_some",
    ),
    (
        "logging/__init__.py",
        "if force: for h in root.handlers[:]: root.removeHandler(h) h.close()",
        "What does basicConfig(force=True) do to existing handlers?",
        "With force, basicConfig removes and closes the root logger's existing handlers.",
        "With force, basicConfig removes the root logger's existing handlers but does "
        "not close them.",
        "negation",
    ),
    (
        "logging/__init__.py",
        "mode = kwargs.pop(\"filemode\", 'a')",
        "Does basicConfig overwrite the log file?",
        "basicConfig opens the log file in append mode by default.",
        "basicConfig opens the log file in write mode, truncating it, by default.",
        "default",
    ),
    (
        "logging/__init__.py",
        "if len(root.handlers) == 0:",
        "When does basicConfig configure the root logger?",
        "Without force, basicConfig only configures the root logger when it has no handlers.",
        "Without force, basicConfig only configures the root logger when it already has handlers.",
        "condition",
    ),
]


def _repository(file: str) -> str:
    package = DISTRIBUTIONS.get(file.split("/")[0])
    if package is None:
        return f"cpython {platform.python_version()} stdlib"
    return f"{package} {metadata.version(package)}"


def _row(index: int, number: int, pair: tuple[str, ...], label: bool) -> dict:
    root = SITE if pair[0].split("/")[0] in DISTRIBUTIONS else STDLIB
    return claim_row("heldout", index, number, pair, root, _repository(pair[0]), label)


def main() -> None:
    for pair in PAIRS:
        assert pair[5] in CLASSES, pair
        assert pair[3] != pair[4], pair
    per_base = Counter(_repository(pair[0]) for pair in PAIRS)
    assert len(per_base) >= 8 and max(per_base.values()) <= 15, per_base
    write_claims(PAIRS, _row, OUT)


if __name__ == "__main__":
    main()
