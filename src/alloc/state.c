/* SPDX-License-Identifier: Apache-2.0
 * state.c — running totals for shared counters, compatibility groups and
 * consumable capacity. Every charge has an exact inverse, applied on every
 * backtrack (the upstream allocator leaked here, kubernetes#140436). */
#include "alloc/internal.h"

static bool cap_name_eq(const char *req, const char *have) {
        if (streq(req, have)) return true;
        /* an unprefixed request names the capacity in the driver's domain */
        const char *slash = strchr(have, '/');
        return !strchr(req, '/') && slash && streq(slash + 1, req);
}

bool state_capacity_amount(const cap_ent *c, const dp_alloc_subrequest *sr, bool multi, __int128 *ret) {
        const dp_alloc_capacity *p = &c->spec;
        bool asked = false;
        __int128 want = 0;
        for (size_t i = 0; i < sr->n_capacity; i++)
                if (cap_name_eq(sr->capacity[i].name, p->name)) {
                        want = sr->capacity[i].value;
                        asked = true;
                        break;
                }
        if (!multi) {
                /* an exclusive device only has to be big enough */
                *ret = asked ? want : p->value;
                return !asked || want <= p->value;
        }
        if (!asked) want = (p->has_policy && p->has_default) ? p->def : p->value;
        if (p->has_policy) {
                if (p->n_valid_values) {
                        size_t i = 0;
                        while (i < p->n_valid_values && p->valid_values[i] < want) i++;
                        if (i == p->n_valid_values) return false;
                        want = p->valid_values[i];
                } else if (p->has_range) {
                        if (want < p->min) want = p->min;
                        if (p->has_step && p->step > 0) {
                                __int128 k = (want - p->min + p->step - 1) / p->step;
                                want = p->min + k * p->step;
                        }
                        if (p->has_max && want > p->max) return false;
                }
        }
        if (want > p->value) return false;
        *ret = want;
        return true;
}

bool state_capacity_requested_exists(const dp_alloc_snapshot *s, const device *d, const dp_alloc_subrequest *sr) {
        for (size_t i = 0; i < sr->n_capacity; i++) {
                bool found = false;
                for (uint32_t c = d->cap_off; c < d->cap_off + d->n_caps && !found; c++)
                        found = cap_name_eq(sr->capacity[i].name, s->caps[c].spec.name);
                if (!found) return false;
        }
        return true;
}

static const cons_ent *cons_on_set(const dp_alloc_snapshot *s, const device *d, uint32_t set) {
        for (uint32_t c = d->cons_off; c < d->cons_off + d->n_cons; c++)
                if (s->cons[c].set == set) return &s->cons[c];
        return NULL;
}

/* 1.37 compatibility groups: the intersection over every device on this
 * counter set, this one included, must stay non-empty; devices without
 * groups only go with each other. */
static fit_kind groups_fit(const dp_alloc_snapshot *s, const cons_ent *ce, fit_detail *why) {
        const counter_set *cs = &s->sets[ce->set];
        uint32_t g[DP_ALLOC_GROUPS_MAX];
        uint32_t ng = ce->n_groups;
        memcpy(g, ce->groups, sizeof(g));
        for (size_t u = 0; u < cs->n_users; u++) {
                const cons_ent *ue = cons_on_set(s, &s->devs[cs->users[u]], ce->set);
                bool ok;
                if (!ue) continue;
                if (ce->n_groups == 0 || ue->n_groups == 0) {
                        ok = ce->n_groups == 0 && ue->n_groups == 0;
                } else {
                        uint32_t keep = 0;
                        for (uint32_t i = 0; i < ng; i++)
                                for (uint32_t j = 0; j < ue->n_groups; j++)
                                        if (g[i] == ue->groups[j]) {
                                                g[keep++] = g[i];
                                                break;
                                        }
                        ng = keep;
                        ok = ng > 0;
                }
                if (!ok) {
                        if (why) *why = (fit_detail){FIT_GROUPS, ce->set, cs->users[u]};
                        return FIT_GROUPS;
                }
        }
        return FIT_OK;
}

fit_kind state_check_counters(dp_alloc_snapshot *s, uint32_t dev, fit_detail *why) {
        const device *d = &s->devs[dev];
        for (uint32_t c = d->cons_off; c < d->cons_off + d->n_cons; c++) {
                const cons_ent *ce = &s->cons[c];
                if (ce->set == NONE_ID) continue;
                for (uint32_t a = ce->amount_off; a < ce->amount_off + ce->n_amounts; a++) {
                        const amount_ent *am = &s->amounts[a];
                        if (am->counter == NONE_ID) continue;
                        const counter *ct = &s->ctrs[am->counter];
                        if (ct->consumed + am->amount > ct->value) {
                                if (why) *why = (fit_detail){FIT_COUNTER, ce->set, am->counter};
                                return FIT_COUNTER;
                        }
                }
                fit_kind k = groups_fit(s, ce, why);
                if (k != FIT_OK) return k;
        }
        return FIT_OK;
}

fit_kind state_check_groups(const dp_alloc_snapshot *s, uint32_t dev, fit_detail *why) {
        const device *d = &s->devs[dev];
        for (uint32_t c = d->cons_off; c < d->cons_off + d->n_cons; c++) {
                const cons_ent *ce = &s->cons[c];
                if (ce->set == NONE_ID || s->sets[ce->set].n_users == 0) continue;
                fit_kind k = groups_fit(s, ce, why);
                if (k != FIT_OK) return k;
        }
        return FIT_OK;
}

/* sign +1 charges and makes the device a user of each set it draws on; -1
 * undoes the most recent charge of this device (callers undo in reverse). */
void state_charge_counters(dp_alloc_snapshot *s, uint32_t dev, int sign) {
        const device *d = &s->devs[dev];
        for (uint32_t c = d->cons_off; c < d->cons_off + d->n_cons; c++) {
                const cons_ent *ce = &s->cons[c];
                if (ce->set == NONE_ID) continue;
                for (uint32_t a = ce->amount_off; a < ce->amount_off + ce->n_amounts; a++) {
                        const amount_ent *am = &s->amounts[a];
                        if (am->counter != NONE_ID) s->ctrs[am->counter].consumed += sign * am->amount;
                }
                counter_set *cs = &s->sets[ce->set];
                if (sign > 0) {
                        /* sized at freeze: a device is a user of a set at most once */
                        assert(cs->n_users < cs->cap_users);
                        cs->users[cs->n_users++] = dev;
                        continue;
                }
                for (size_t u = cs->n_users; u > 0; u--)
                        if (cs->users[u - 1] == dev) {
                                memmove(cs->users + u - 1, cs->users + u, (cs->n_users - u) * sizeof(uint32_t));
                                cs->n_users--;
                                break;
                        }
        }
}
