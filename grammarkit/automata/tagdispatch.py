"""``TagDispatch`` as an automaton: free text scanned by an Aho-Corasick machine over the tags.

Semantics (xgrammar 0.2.8, established by differential testing):

* Free text is any bytes (even invalid UTF-8) and may end anywhere outside a completed tag.
* The tags and the ``excludes`` strings form one Aho-Corasick trie. Scanning follows the usual
  goto/failure transitions, so the first occurrence of a tag is found wherever it starts.
* Reaching the trie node of a tag forces a dispatch: the tag's rule must follow (then free text
  resumes, or with ``loop_after_dispatch=false`` the macro ends). Only the node itself counts: a
  tag that is merely a suffix of the current node (``ab`` inside ``xab`` when ``xaby`` is also a
  tag) does not dispatch. At a tag node, the trie's own children remain possible (tags ``a`` and
  ``ab``); other bytes are not.
* Text containing an exclude string anywhere (the node or any suffix of it) is rejected.
"""

from __future__ import annotations

from collections import deque

from grammarkit.automata.nfa import NFA


def build_tag_dispatch(nfa: NFA, tags: list[tuple[bytes, int]], excludes: list[bytes],
                       loop_after_dispatch: bool) -> tuple[int, int]:
    """Add the automaton of one ``TagDispatch`` to ``nfa``; return its ``(start, end)`` states.

    ``tags`` pairs each tag's bytes with the number of the rule it dispatches to.
    """
    children: list[dict[int, int]] = [{}]
    node_rules: list[list[int]] = [[]]
    excluded: list[bool] = [False]

    def insert(pattern: bytes) -> int:
        node = 0
        for byte in pattern:
            nxt = children[node].get(byte)
            if nxt is None:
                nxt = len(children)
                children[node][byte] = nxt
                children.append({})
                node_rules.append([])
                excluded.append(False)
            node = nxt
        return node

    for tag, rule in tags:
        node_rules[insert(tag)].append(rule)
    for pattern in excludes:
        excluded[insert(pattern)] = True

    delta = _aho_corasick(children, excluded)
    states = [nfa.add_state() for _ in children]
    end = nfa.add_state()
    after = states[0] if loop_after_dispatch else nfa.add_state()
    if not loop_after_dispatch:
        nfa.add_epsilon(after, end)
    for node, state in enumerate(states):
        if excluded[node]:
            continue
        if node_rules[node]:
            for rule in node_rules[node]:
                nfa.add_call(state, rule, after)
            for byte, child in sorted(children[node].items()):
                nfa.add_bytes(state, byte, byte, states[child])
            continue
        nfa.add_epsilon(state, end)
        row = delta[node]
        lo = 0
        for byte in range(1, 257):
            if byte == 256 or row[byte] != row[lo]:
                nfa.add_bytes(state, lo, byte - 1, states[row[lo]])
                lo = byte
    return states[0], end


def _aho_corasick(children: list[dict[int, int]], excluded: list[bool]) -> list[list[int]]:
    """The full transition table of the trie; marks nodes with an excluded suffix in place."""
    delta = [[0] * 256 for _ in children]
    failure = [0] * len(children)
    queue: deque[int] = deque()
    for byte, child in children[0].items():
        delta[0][byte] = child
        queue.append(child)
    while queue:
        node = queue.popleft()
        excluded[node] = excluded[node] or excluded[failure[node]]
        row = delta[node]
        row[:] = delta[failure[node]]
        for byte, child in children[node].items():
            failure[child] = delta[failure[node]][byte]
            row[byte] = child
            queue.append(child)
    return delta
