"""Generation with `RandomLM` on a small vocabulary: the contract of `gk.generate`."""

from __future__ import annotations

import pickle

import pytest

import grammarkit as gk
from grammarkit.generate import (
    Completion,
    GenerationError,
    RandomLM,
    SamplingParams,
    as_grammar,
    get_backend,
    request_field,
)
from grammarkit.vocab import Vocabulary

DIGITS = 'root ::= [0-9]+ "." [0-9]'


def test_generates_a_sentence_and_stops_at_eos(small_vocab: Vocabulary) -> None:
    out = gk.generate('root ::= "ab" | "abc" | "x"', "go", vocab=small_vocab, max_tokens=8)
    assert isinstance(out, Completion)
    assert out.text in {"ab", "abc", "x"}
    assert out.finish_reason == "stop"
    assert out.matched_stop == small_vocab.token_id("<|endoftext|>")
    assert out.completion_tokens == len(out.token_ids) + 1
    assert out.prompt_tokens == 2


@pytest.mark.parametrize("seed", range(8))
def test_every_completion_matches_the_grammar(small_vocab: Vocabulary, seed: int) -> None:
    grammar = gk.Grammar.from_ebnf('root ::= "[" ([0-9]+ ("," [0-9]+)*)? "]"')
    out = gk.generate(grammar, [1, 2], vocab=small_vocab, max_tokens=64, seed=seed)
    assert out.finish_reason == "stop"
    assert grammar.matches(out.text), out.text


def test_same_seed_same_output_and_n_choices(small_vocab: Vocabulary) -> None:
    first = gk.generate(DIGITS, [5], vocab=small_vocab, max_tokens=12, seed=3, n=3)
    again = gk.generate(DIGITS, [5], vocab=small_vocab, max_tokens=12, seed=3, n=3)
    assert [c.token_ids for c in first.choices] == [c.token_ids for c in again.choices]
    assert [c.index for c in first.choices] == [0, 1, 2]
    assert len({c.text for c in first.choices}) > 1


def test_length_gives_the_partial_text(small_vocab: Vocabulary) -> None:
    out = gk.generate('root ::= "a"{20}', [1], vocab=small_vocab, max_tokens=3,
                      jump_forward=False)
    assert out.finish_reason == "length"
    assert out.text == "aaa"
    assert out.matched_stop is None


def test_jump_forward_saves_model_calls(small_vocab: Vocabulary) -> None:
    grammar = 'root ::= "{\\"name\\": \\"" [a-z]+ "\\"}"'
    fast = gk.generate(grammar, [1], vocab=small_vocab, max_tokens=40, seed=0)
    slow = gk.generate(grammar, [1], vocab=small_vocab, max_tokens=40, seed=0,
                       jump_forward=False)
    assert fast.text.startswith('{"name": "') and as_grammar(grammar).matches(fast.text)
    assert fast.timing.jump_forward_tokens >= 3
    assert fast.timing.model_calls < slow.timing.model_calls
    assert slow.timing.jump_forward_tokens == 0


def test_stop_string_cuts_the_text(small_vocab: Vocabulary) -> None:
    out = gk.generate('root ::= "ab" "c"* "." "xyz"', [1], vocab=small_vocab, max_tokens=30,
                      stop=["."], seed=1)
    assert out.finish_reason == "stop" and out.matched_stop == "."
    assert "." not in out.text and out.text.startswith("ab")


def test_min_tokens_holds_back_eos(small_vocab: Vocabulary) -> None:
    out = gk.generate('root ::= "a"*', [1], vocab=small_vocab, max_tokens=10, min_tokens=6,
                      temperature=0, jump_forward=False, logit_bias={
                          small_vocab.token_id("<|endoftext|>"): 100})
    assert out.text == "a" * 6 and out.finish_reason == "stop"


def test_ignore_eos_runs_to_max_tokens(small_vocab: Vocabulary) -> None:
    out = gk.generate('root ::= "a"*', [1], vocab=small_vocab, max_tokens=7, ignore_eos=True)
    assert out.text == "a" * 7 and out.finish_reason == "length"


def test_stop_token_ids_end_where_the_grammar_may(small_vocab: Vocabulary) -> None:
    stop = small_vocab.token_id("!")
    out = gk.generate('root ::= "a"+', [1], vocab=small_vocab, max_tokens=30,
                      stop_token_ids=[stop], logit_bias={stop: 50}, seed=0)
    assert out.text == "a" and out.matched_stop == stop


def test_greedy_follows_logit_bias(small_vocab: Vocabulary) -> None:
    bias = {small_vocab.token_id("b"): 100}
    out = gk.generate('root ::= [abc]{4}', [1], vocab=small_vocab, temperature=0,
                      logit_bias=bias, max_tokens=8)
    assert out.text == "bbbb"


def test_logprobs(small_vocab: Vocabulary) -> None:
    out = gk.generate('root ::= [ab] "cd" [ab]', [1], vocab=small_vocab, logprobs=2, seed=0,
                      max_tokens=8)
    logprobs = out.choices[0].logprobs
    assert logprobs is not None and [p.token_id for p in logprobs] == out.token_ids
    assert all(p.logprob <= 0 and len(p.top_logprobs) <= 2 for p in logprobs)
    assert logprobs[0].top_logprobs.keys() == {small_vocab.token_id("a"),
                                               small_vocab.token_id("b")}


def test_stream_concatenates_to_the_completion(small_vocab: Vocabulary) -> None:
    grammar = 'root ::= "héllo " [a-z]+ " wörld"'
    whole = gk.generate(grammar, [1], vocab=small_vocab, max_tokens=40, seed=4)
    chunks = list(gk.stream(grammar, [1], vocab=small_vocab, max_tokens=40, seed=4))
    assert "".join(c.text for c in chunks) == whole.text
    assert [t for c in chunks for t in c.token_ids] == whole.token_ids
    assert chunks[-1].finish_reason == whole.finish_reason
    assert all(c.finish_reason is None for c in chunks[:-1])
    assert all("\ufffd" not in c.text for c in chunks)


def test_stream_never_shows_a_stop_string(small_vocab: Vocabulary) -> None:
    chunks = list(gk.stream('root ::= "ab" "c"* "STOP" "xyz"', [1], vocab=small_vocab,
                            max_tokens=30, stop=["STOP"], seed=2))
    assert "STOP" not in "".join(c.text for c in chunks)
    assert chunks[-1].matched_stop == "STOP"


def test_text_prompt_without_tokenizer_is_tokenized_greedily(small_vocab: Vocabulary) -> None:
    out = gk.generate('root ::= "x"', "abc true", vocab=small_vocab)
    assert out.prompt_tokens == 3  # "abc", " ", "true"


def test_constraint_kinds_and_request_fields() -> None:
    schema = gk.JsonSchema({"type": "integer"})
    assert request_field(schema) == ("json_schema", '{"type": "integer"}')
    assert request_field(gk.Regex("[a-z]+")) == ("regex", "[a-z]+")
    assert request_field('root ::= "a"') == ("ebnf", 'root ::= "a"')
    assert request_field(gk.Grammar.from_ebnf('start ::= "a"', "start"))[1].startswith(
        "root ::= start")
    assert as_grammar(schema).matches("-12") and as_grammar(gk.Regex("[a-z]+")).matches("ab")
    with pytest.raises(TypeError, match="JsonSchema"):
        as_grammar(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(("field", "value"), [
    ("max_tokens", 0), ("temperature", -1), ("top_p", 0.0), ("top_k", 0), ("min_p", 2),
    ("n", 0), ("logit_bias", {"x": 1}), ("logit_bias", {1: 500}), ("stop", [""]),
    ("stop_token_ids", [-1]), ("repetition_penalty", 0), ("frequency_penalty", 3),
])
def test_params_name_the_bad_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        SamplingParams(**{field: value})  # type: ignore[arg-type]


def test_params_from_mapping() -> None:
    assert SamplingParams.from_mapping({"stop": "\n", "logit_bias": {"5": -100}}) == \
        SamplingParams(stop=("\n",), logit_bias={5: -100.0})
    with pytest.raises(ValueError, match="unknown sampling parameter.*tempurature"):
        SamplingParams.from_mapping({"tempurature": 0})


def test_unknown_backend_lists_the_known(small_vocab: Vocabulary) -> None:
    with pytest.raises(GenerationError, match="native, xgrammar, remote") as info:
        get_backend("nativ", vocab=small_vocab)
    assert info.value.diagnostic.code == "GK350"


def test_prompt_ids_out_of_range(small_vocab: Vocabulary) -> None:
    with pytest.raises(GenerationError, match="position 1") as info:
        gk.generate('root ::= "a"', [1, 10**6], vocab=small_vocab)
    assert info.value.diagnostic.code == "GK352"
    assert pickle.loads(pickle.dumps(info.value)).diagnostic == info.value.diagnostic


def test_local_backend_needs_a_vocabulary() -> None:
    with pytest.raises(GenerationError, match="vocabulary") as info:
        gk.generate('root ::= "a"', [1])
    assert info.value.diagnostic.code == "GK354"


def test_smaller_model_than_vocabulary_is_refused(small_vocab: Vocabulary) -> None:
    class Tiny(RandomLM):
        @property
        def vocab_size(self) -> int:
            return 100

    with pytest.raises(GenerationError, match="100 token ids") as info:
        gk.generate('root ::= "a"', [1], lm=Tiny(small_vocab), vocab=small_vocab)
    assert info.value.diagnostic.code == "GK353"


def test_larger_model_pads_the_vocabulary(small_vocab: Vocabulary) -> None:
    padded = Vocabulary.from_tokens(small_vocab.tokens, vocab_size=small_vocab.vocab_size + 30)
    lm = RandomLM(padded, seed=2)
    out = gk.generate('root ::= [a-c]+', [1], lm=lm, vocab=small_vocab, max_tokens=5)
    assert out.text and set(out.text) <= set("abc")


def test_random_lm_is_a_function_of_the_context(small_vocab: Vocabulary) -> None:
    lm = RandomLM(small_vocab, seed=1)
    assert (lm.logits([1, 2]) == lm.logits([1, 2])).all()
    assert (lm.logits([1, 2]) != lm.logits([2, 1])).any()
    assert lm.logits([]).shape == (small_vocab.vocab_size,)


@pytest.mark.xgrammar
@pytest.mark.parametrize("grammar", [DIGITS, 'root ::= "{\\"a\\": " [0-9]+ "}"',
                                     'root ::= ("ab" | "abc" | [x-z])+'])
def test_native_and_xgrammar_agree_at_temperature_0(small_vocab: Vocabulary,
                                                    grammar: str) -> None:
    runs = [gk.generate(grammar, [1, 2], backend=name, vocab=small_vocab, temperature=0,
                        max_tokens=24) for name in ("native", "xgrammar")]
    assert runs[0].token_ids == runs[1].token_ids
    assert runs[0].finish_reason == runs[1].finish_reason
    assert runs[0].timing.jump_forward_tokens == runs[1].timing.jump_forward_tokens


@pytest.mark.parametrize("narrowing", [{"top_k": 1}, {"top_p": 1e-9}, {"min_p": 1.0}])
def test_narrow_sampling_is_greedy(small_vocab: Vocabulary, narrowing: dict[str, float]) -> None:
    grammar = 'root ::= [a-z]{6}'
    greedy = gk.generate(grammar, [7], vocab=small_vocab, temperature=0, max_tokens=8)
    narrow = gk.generate(grammar, [7], vocab=small_vocab, temperature=1.5, seed=4,
                         max_tokens=8, **narrowing)
    assert narrow.token_ids == greedy.token_ids


def test_top_k_limits_the_candidates(small_vocab: Vocabulary) -> None:
    grammar = 'root ::= [a-z]'
    lm = RandomLM(small_vocab, seed=9)
    scores = lm.logits([7])
    letters = [small_vocab.token_id(c) for c in "abcdefghijklmnopqrstuvwxyz"]
    best_two = set(sorted(letters, key=lambda t: -scores[t])[:2])
    picked = {gk.generate(grammar, [7], lm=lm, vocab=small_vocab, top_k=2, seed=s,
                          temperature=5.0).token_ids[0] for s in range(30)}
    assert picked == best_two


@pytest.mark.parametrize("penalty", [{"presence_penalty": 2.0}, {"frequency_penalty": 2.0},
                                     {"repetition_penalty": 50.0}])
def test_penalties_discourage_repeats(small_vocab: Vocabulary, penalty: dict[str, float]) -> None:
    a, b = small_vocab.token_id("a"), small_vocab.token_id("b")
    bias = {a: 20.0, b: 19.0}  # "a" wins greedily, unless it was used already
    plain = gk.generate('root ::= [ab]{4}', [7], vocab=small_vocab, temperature=0,
                        logit_bias=bias, jump_forward=False)
    penalised = gk.generate('root ::= [ab]{4}', [7], vocab=small_vocab, temperature=0,
                            logit_bias=bias, jump_forward=False, **penalty)
    assert plain.text == "aaaa"
    assert penalised.text.startswith("ab")


def test_stream_with_n_and_logprobs(small_vocab: Vocabulary) -> None:
    chunks = list(gk.stream('root ::= [ab]{3}', [1], vocab=small_vocab, n=2, seed=1,
                            logprobs=1))
    for index in (0, 1):
        mine = [c for c in chunks if c.index == index]
        assert len("".join(c.text for c in mine)) == 3 and mine[-1].finish_reason == "stop"
        assert all(c.logprobs is not None for c in mine if c.token_ids)


@pytest.mark.parametrize("share", [0.0, 0.001, 0.3, 1.0])
def test_allowed_ids_reads_every_set_bit(share: float) -> None:
    import numpy as np

    from grammarkit.decode.bitmask import words_from_bools
    from grammarkit.generate.decoding import allowed_ids

    allowed = np.random.default_rng(1).random(1000) < share
    assert allowed_ids(words_from_bools(allowed), 1000).tolist() == np.flatnonzero(
        allowed).tolist()
