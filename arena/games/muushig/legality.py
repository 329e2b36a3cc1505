"""Which cards may be played to a trick (rules §7.2–7.3), and why not.

``lead_mask`` and ``follow_mask`` are the hot path: a few table look-ups on
bit masks. ``explain_illegal`` runs only when a bot sends a wrong card and
turns the same rules into a sentence the bot's author can act on.
"""

from __future__ import annotations

from arena.games.muushig.cards import (
    ABOVE,
    ACE,
    ACE_MASK,
    BIT,
    CARD_STR,
    LEAD_BLOCK,
    SUIT_MASK,
    SUIT_NAMES,
    join_cards,
    mask_cards,
)


def lead_mask(hand: int, trump: int, first_trick: bool, trump_ace_first: bool) -> int:
    """Cards the leader may lead: a held ace must lead its suit (§7.2, every
    suit incl. trump); variant: the trump ace must open the first trick."""
    if trump_ace_first and first_trick:
        ace = BIT[trump * 8 + ACE]
        if hand & ace:
            return ace
    return hand & ~LEAD_BLOCK[hand & ACE_MASK]


def follow_mask(hand: int, led: int, trump: int, win: int, trumped: bool) -> int:
    """Cards a follower may play (§7.3).

    ``win`` is the card winning so far: the highest trump once a trump is on
    the table (``trumped``), else the highest card of the led suit. When the
    led suit is trump both readings agree.
    """
    follow = hand & SUIT_MASK[led]
    if follow:
        if trumped and led != trump:
            return follow  # the duty to beat lapses once the trick is trumped
        higher = follow & ABOVE[win]
        return higher or follow
    trumps = hand & SUIT_MASK[trump]
    if trumps:
        if trumped:
            higher = trumps & ABOVE[win]
            return higher or trumps  # must trump even if it cannot over-trump
        return trumps
    return hand


def explain_illegal(
    card: int,
    hand: int,
    legal: int,
    trump: int,
    led: int | None,
    win: int,
    trumped: bool,
    first_trick: bool,
    trump_ace_first: bool,
) -> str:
    """Why ``card`` (held, but not in ``legal``) may not be played now."""
    options = join_cards(mask_cards(legal))
    s = card >> 3
    if led is None:
        ace = s * 8 + ACE
        if trump_ace_first and first_trick and hand & BIT[trump * 8 + ACE]:
            return (
                f"must lead the trump ace {CARD_STR[trump * 8 + ACE]}: on the first trick a leader "
                f"holding the trump ace leads it"
            )
        if hand & BIT[ace]:
            return (
                f"must lead the ace: you hold {CARD_STR[ace]}, so {SUIT_NAMES[s]} may only be led "
                f"with {CARD_STR[ace]}"
            )
        return f"{CARD_STR[card]} may not be led now: lead one of {options}"  # pragma: no cover
    if hand & SUIT_MASK[led]:
        if s != led:
            return f"must follow {SUIT_NAMES[led]}: play one of {options}"
        return f"must follow {SUIT_NAMES[led]} and beat {CARD_STR[win]}: play one of {options}"
    if hand & SUIT_MASK[trump]:
        if s != trump:
            return f"no {SUIT_NAMES[led]} in hand, so you must trump: play one of {options}"
        return f"must over-trump {CARD_STR[win]}: play one of {options}"
    return f"{CARD_STR[card]} may not be played now: play one of {options}"  # pragma: no cover
