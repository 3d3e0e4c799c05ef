/* SPDX-License-Identifier: Apache-2.0
 *
 * transform.c — Kueue's resource transformations (Configuration
 * resources.transformations, pkg/workload applyResourceTransformations):
 * per pod, a request of a transformation's input adds, for each output,
 * the output's amount × the input's whole units (Quantity.Value(): rounded
 * up, so 500m of cpu counts 1), times the pod's request of `multiplyBy`
 * when set; the strategy Retain keeps the input, Replace drops it. Outputs
 * of several inputs add up. Applied to the containers' requests before DRA
 * charges and the excluded prefixes, as Kueue does.
 */
#include "queue/queue-internal.h"

void q_requests_free(dp_queue_request *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i].name);
        free(v);
}

static const dp_kueue_transformation *find(const dp_kueue_config *cfg, const char *input) {
        for (size_t i = 0; cfg && i < cfg->n_transformations; i++)
                if (streq(cfg->transformations[i].input, input)) return &cfg->transformations[i];
        return NULL;
}

static int64_t request_of(const dp_queue_podset *ps, const char *name) {
        for (size_t i = 0; i < ps->n_requests; i++)
                if (streq(ps->requests[i].name, name)) return ps->requests[i].value;
        return -1;
}

/* A pod set request's whole units (cpu is held in millis). */
static int64_t whole_units(const char *name, int64_t v) {
        return streq(name, "cpu") ? (v + 999) / 1000 : v;
}

/* out += amount × units, in out's units, saturating. */
static int add_output(dp_queue_request **out, size_t *n_out, const dp_named_quantity *o, int64_t units) {
        int64_t per = q_value(o->name, &o->value), v;
        if (__builtin_mul_overflow(per, units, &v)) v = INT64_MAX;
        return q_request_add(out, n_out, o->name, v);
}

int q_transform_requests(const dp_queue *q, dp_queue_podset *ps) {
        const dp_kueue_config *cfg = q->opts ? q->opts->config : NULL;
        if (!cfg || !cfg->n_transformations) return 0;
        dp_queue_request *out = NULL;
        size_t n_out = 0;
        int r = 0;
        for (size_t i = 0; i < ps->n_requests && r >= 0; i++) {
                const dp_queue_request *in = &ps->requests[i];
                const dp_kueue_transformation *t = find(cfg, in->name);
                if (!t) {
                        r = q_request_add(&out, &n_out, in->name, in->value);
                        continue;
                }
                int64_t units = whole_units(in->name, in->value), by;
                if (t->multiply_by && (by = request_of(ps, t->multiply_by)) >= 0 &&
                    __builtin_mul_overflow(units, whole_units(t->multiply_by, by), &units))
                        units = INT64_MAX;
                for (size_t k = 0; k < t->n_outputs && r >= 0; k++)
                        r = add_output(&out, &n_out, &t->outputs[k], units);
                if (r >= 0 && !t->replace) r = q_request_add(&out, &n_out, in->name, in->value);
        }
        if (r < 0) {
                q_requests_free(out, n_out);
                return r;
        }
        q_requests_free(ps->requests, ps->n_requests);
        ps->requests = out;
        ps->n_requests = n_out;
        return 0;
}
