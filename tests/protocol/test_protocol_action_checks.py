"""An ``action`` is read in one step when well formed; whatever its fields
hold, it is taken or refused exactly as the field checks say."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from protocol.errors import ProtocolError
from protocol.messages import _MISSING, Action, _Fields, parse_bot_message

FIELD = st.one_of(st.just(_MISSING), st.none(), st.booleans(), st.integers(-5, 5),
                  st.text(max_size=4), st.lists(st.integers(), max_size=2),
                  st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))


def _by_field_checks(data: dict) -> Action:
    f = _Fields(data, "action")
    return Action(match=f.string("match"), id=f.integer("id"), action=f.present("action"))


def _outcome(read, data):
    try:
        return ("ok", read(data))
    except ProtocolError as exc:
        return (type(exc).__name__, exc.message)


@given(match=FIELD, request_id=FIELD, action=FIELD)
def test_an_action_is_read_as_the_field_checks_read_it(match, request_id, action):
    data = {"type": "action"}
    for name, value in (("match", match), ("id", request_id), ("action", action)):
        if value is not _MISSING:
            data[name] = value
    expected = _outcome(_by_field_checks, data)
    assert _outcome(Action.from_wire, data) == expected
    assert _outcome(parse_bot_message, data) == expected


@given(type_name=FIELD)
def test_a_message_type_is_judged_as_before(type_name):
    data = {} if type_name is _MISSING else {"type": type_name}
    outcome = _outcome(parse_bot_message, data)
    if type_name in ("hello", "action", "bye"):
        assert outcome[0] in ("ok", "ValidationError")
    elif isinstance(type_name, str):
        assert outcome[0] == "UnknownTypeError"
    else:
        assert outcome[0] == "ValidationError"
        assert outcome[1].startswith("message.type: expected a string")
