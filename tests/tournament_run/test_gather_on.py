"""Where a slot whose entrants are on different nodes should gather them:
the node that holds most of them (ties: the first by name)."""

from __future__ import annotations

from arena.tournament.waiting import WaitingEntrant, gather_on


def _at(**nodes: list[str]) -> list[WaitingEntrant]:
    return [WaitingEntrant(name, where) for name, where in nodes.items()]


def test_the_node_holding_most_of_the_entrants_is_named():
    assert gather_on(_at(ann=["node-b"], bob=["node-b"], cat=["node-a"])) == "node-b"


def test_a_tie_goes_to_the_first_node_by_name():
    assert gather_on(_at(ann=["node-c"], bob=["node-a"])) == "node-a"


def test_a_bot_connected_to_two_nodes_counts_for_both():
    assert gather_on(_at(ann=["node-a", "node-c"], bob=["node-c"], cat=["node-b"])) == "node-c"


def test_nothing_is_named_when_the_entrants_share_a_node_or_one_is_connected_nowhere():
    assert gather_on(_at(ann=["node-a", "node-b"], bob=["node-b"])) is None
    assert gather_on(_at(ann=[], bob=["node-b"])) is None
    assert gather_on([]) is None
