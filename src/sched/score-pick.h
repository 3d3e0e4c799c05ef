/* SPDX-License-Identifier: Apache-2.0
 * score-pick.h — what filter.c hands score.c for one cycle: the feasible
 * nodes (in name order) with each plugin's raw score, kept in arrays n long
 * (NULL: the plugin skipped, every node alike). */
#pragma once

#include "base/macros.h"
#include "sched/score.h"

typedef struct dp_score_nodes {
        size_t n;
        int64_t *total;    /* in: weighted NodeResourcesFit + BalancedAllocation; out: the sum */
        int64_t *taint;    /* intolerable PreferNoSchedule taints */
        int64_t *affinity; /* preferred node affinity weights matched */
        int64_t *interpod; /* InterPodAffinity's Score */
        int64_t *spread;   /* PodTopologySpread's Score */
        bool *spread_ignored;
        int64_t *dra;   /* DynamicResources' Score */
        int64_t *image; /* ImageLocality's Score (not normalised) */
} dp_score_nodes;

/* Normalise, weigh and sum (the arrays are changed); the index of the
 * best node, the first among equals. n > 0. */
size_t dp_score_pick(const dp_score_profile *p, dp_score_nodes *s);
