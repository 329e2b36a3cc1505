/* The bot's choice: one element of the request's `legal` array. */
#ifndef ARENA_STRATEGY_H
#define ARENA_STRATEGY_H

#include "json.h"

/* Returns a pointer into `legal` (never an answer outside it), or NULL if
 * `legal` is not a non-empty array. */
const jval *choose(const char *phase, const jval *legal, const jval *state);

#endif
