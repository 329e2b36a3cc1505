/* A simple heuristic: enter with two strong cards, discard low non-trumps,
 * take the face-up trump for the weakest card, win tricks when possible
 * with the strongest winning card, otherwise throw the weakest card. */
#include "strategy.h"

#include <string.h>

static const char RANKS[] = "789TJQKA";

static int rank_of(const char *card) {
    const char *r = strchr(RANKS, card[0]);
    return r ? (int)(r - RANKS) : -1;
}

static int is_card(const jval *v) { return v && v->type == J_STR && v->len == 2 && rank_of(v->str) >= 0; }

/* Higher is stronger: any trump beats any non-trump, then rank. */
static int strength(const char *card, char trump) { return (card[1] == trump ? 8 : 0) + rank_of(card); }

static char trump_of(const jval *state) {
    const char *t = json_get_str(state, "trump");
    return t && t[0] ? t[0] : '?';
}

static const jval *decide(const jval *legal, const jval *state) {
    const jval *cards = json_get(state, "cards");
    char trump = trump_of(state);
    int strong = 0;
    for (size_t i = 0; cards && cards->type == J_ARR && i < cards->count; i++) {
        const jval *c = cards->items[i];
        if (is_card(c) && (c->str[0] == 'A' || (c->str[1] == trump && rank_of(c->str) >= 4))) strong++;
    }
    const char *want = strong >= 2 ? "enter" : "fold";
    for (size_t i = 0; i < legal->count; i++)
        if (json_is_str(legal->items[i], want)) return legal->items[i];
    return legal->items[0];
}

static int weak_card(const jval *c, char trump) { return is_card(c) && c->str[1] != trump && rank_of(c->str) < 6; }

static const jval *exchange(const jval *legal, const jval *state) {
    /* Sets come ordered by size: keep the largest one made only of weak cards. */
    char trump = trump_of(state);
    const jval *best = legal->items[0];
    for (size_t i = 0; i < legal->count; i++) {
        const jval *set = legal->items[i];
        if (set->type != J_ARR) continue;
        int all_weak = 1;
        for (size_t j = 0; j < set->count; j++) all_weak &= weak_card(set->items[j], trump);
        if (all_weak && set->count > (best->type == J_ARR ? best->count : 0)) best = set;
    }
    return best;
}

static const jval *take(const jval *legal, const jval *state) {
    char trump = trump_of(state);
    const jval *weakest = NULL;
    for (size_t i = 0; i < legal->count; i++) {
        const jval *c = legal->items[i];
        if (is_card(c) && (!weakest || strength(c->str, trump) < strength(weakest->str, trump))) weakest = c;
    }
    const char *face_up = json_get_str(state, "face_up");
    if (weakest && face_up && strlen(face_up) == 2 && strength(weakest->str, trump) < strength(face_up, trump))
        return weakest;
    return legal->items[0]; /* null: decline */
}

/* Would `card` from our seat win the trick as it stands? */
static int wins(const jval *trick, const char *card, char trump) {
    if (!trick || trick->type != J_ARR || trick->count == 0) return 1;
    const char *best = NULL;
    char led = 0;
    for (size_t i = 0; i < trick->count; i++) {
        const jval *entry = trick->items[i];
        if (entry->type != J_ARR || entry->count != 2 || !is_card(entry->items[1])) return 0;
        const char *c = entry->items[1]->str;
        if (i == 0) { led = c[1]; best = c; continue; }
        if ((c[1] == best[1] && rank_of(c) > rank_of(best)) || (c[1] == trump && best[1] != trump)) best = c;
    }
    if (card[1] == best[1]) return rank_of(card) > rank_of(best);
    return card[1] == trump && best[1] != trump && (led != trump);
}

static const jval *play(const jval *legal, const jval *state) {
    char trump = trump_of(state);
    const jval *trick = json_get(state, "trick");
    const jval *best_win = NULL, *weakest = NULL;
    for (size_t i = 0; i < legal->count; i++) {
        const jval *c = legal->items[i];
        if (!is_card(c)) continue;
        if (!weakest || strength(c->str, trump) < strength(weakest->str, trump)) weakest = c;
        if (wins(trick, c->str, trump) && (!best_win || strength(c->str, trump) > strength(best_win->str, trump)))
            best_win = c;
    }
    if (best_win) return best_win;
    return weakest ? weakest : legal->items[0];
}

const jval *choose(const char *phase, const jval *legal, const jval *state) {
    if (!legal || legal->type != J_ARR || legal->count == 0) return NULL;
    if (!phase) return legal->items[0];
    if (strcmp(phase, "decide") == 0) return decide(legal, state);
    if (strcmp(phase, "exchange") == 0) return exchange(legal, state);
    if (strcmp(phase, "take") == 0) return take(legal, state);
    if (strcmp(phase, "play") == 0) return play(legal, state);
    return legal->items[0]; /* a phase this bot does not know: any legal answer */
}
