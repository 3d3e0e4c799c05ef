/* SPDX-License-Identifier: Apache-2.0
 * Tree-walking evaluator with CEL's error semantics and cel-go's runtime
 * cost model (interpreter/runtimecost.go): identifiers, field selections
 * and index qualifiers cost 1; constants, &&, ||, ?: and comprehensions
 * nothing themselves; calls 1 unless sized (strings ×0.1, `in` list size,
 * regex length product); list literals 10, map literals 30. Cost and memory
 * are checked on every step; exceeding either stops the evaluation (a
 * "fatal" error that && / || cannot absorb). */
#include <math.h>

#include "cel/cel-internal.h"

typedef struct frame {
        const char *name;
        cel_value value;
        const struct frame *up;
} frame;

static cel_value eval(cel_ctx *c, const cel_expr *e, const frame *f);
size_t cel_sig_nargs(const char *sig);
cel_value cel_quantity_value(cel_ctx *c, const dp_quantity *q);

static bool charge(cel_ctx *c, uint64_t n) {
        c->cost += n;
        if (c->cost_limit && c->cost > c->cost_limit) {
                if (!c->fatal) {
                        c->fatal = -E2BIG;
                        c->fatal_msg = "operation cancelled: actual cost limit exceeded";
                }
                return false;
        }
        return true;
}

static cel_value fatal_val(void) { return (cel_value){.kind = CV_ERROR, .err = "fatal"}; }

static const cel_value *lookup(cel_ctx *c, const frame *f, const char *name) {
        for (; f; f = f->up)
                if (streq(f->name, name)) return &f->value;
        for (const cel_activation *a = c->vars; a; a = a->next)
                if (streq(a->name, name)) return &a->value;
        return NULL;
}

static uint64_t vsize(cel_value v) {
        switch (v.kind) {
        case CV_STRING: return cel_utf8_len(v.s.p, v.s.n);
        case CV_BYTES: return v.s.n;
        case CV_LIST: return v.l->n;
        case CV_MAP: return v.m->n;
        default: return 1;
        }
}

double cel_ceil01(size_t n) { return cel_ceil((double)n * 0.1); }

static cel_value opt_of(cel_ctx *c, cel_value v) {
        cel_value *p = cel_alloc(c->arena, sizeof(*p));
        if (!p) return cel_oom(c);
        *p = v;
        return (cel_value){.kind = CV_OPTIONAL, .opt = p};
}
static cel_value opt_none(void) { return (cel_value){.kind = CV_OPTIONAL, .opt = NULL}; }

static cel_value empty_map(cel_ctx *c) {
        cel_map *m = cel_map_new(c, 0);
        if (!m) return cel_oom(c);
        return cel_map_value(m);
}

/* ---- the device ---- */
static int split_name(const dp_cel_device *d, const char *domain, const char *name, const char **ret_dom, size_t *ret_dn,
                      const char **ret_id) {
        if (domain) {
                *ret_dom = domain;
                *ret_dn = strlen(domain);
                *ret_id = name;
                return 0;
        }
        const char *slash = strchr(name, '/');
        if (slash) {
                *ret_dom = name;
                *ret_dn = (size_t)(slash - name);
                *ret_id = slash + 1;
        } else {
                *ret_dom = d->driver ? d->driver : "";
                *ret_dn = strlen(*ret_dom);
                *ret_id = name;
        }
        return 0;
}

static cel_value version_value(cel_ctx *c, const char *s) {
        cel_semver *sv = cel_alloc(c->arena, sizeof(*sv));
        if (!sv) return cel_oom(c);
        int r = cel_semver_parse(c->arena, s, strlen(s), false, sv);
        if (r == -ENOMEM) return cel_oom(c);
        if (r < 0) return cel_error(c, "invalid semver: %s", s);
        return (cel_value){.kind = CV_SEMVER, .sv = sv};
}

static cel_value attr_value(cel_ctx *c, const dp_cel_attr_value *a) {
        switch (a->type) {
        case DP_CEL_ATTR_INT: return cel_int(a->i);
        case DP_CEL_ATTR_BOOL: return cel_bool(a->b);
        case DP_CEL_ATTR_STRING: return a->s ? cel_str(a->s, strlen(a->s)) : cel_str("", 0);
        case DP_CEL_ATTR_VERSION: return version_value(c, a->s ? a->s : "");
        default: break;
        }
        cel_list *l = cel_list_new(c, a->n);
        if (!l) return cel_oom(c);
        for (size_t i = 0; i < a->n; i++) {
                cel_value v;
                switch (a->type) {
                case DP_CEL_ATTR_INTS: v = cel_int(a->ints[i]); break;
                case DP_CEL_ATTR_BOOLS: v = cel_bool(a->bools[i]); break;
                case DP_CEL_ATTR_STRINGS: v = cel_str(a->strs[i], strlen(a->strs[i])); break;
                default: v = version_value(c, a->strs[i]); break;
                }
                if (cel_is_err(v)) return v;
                if (cel_list_push(c, l, v) < 0) return cel_oom(c);
        }
        return cel_list_value(l);
}

/* Build device.attributes (capacity=false) or device.capacity. */
static cel_value device_map(cel_ctx *c, const dp_cel_device *d, bool capacity) {
        cel_map *outer = cel_map_new(c, 0);
        if (!outer) return cel_oom(c);
        outer->lenient = true;
        size_t n = capacity ? d->n_capacities : d->n_attributes;
        for (size_t i = 0; i < n; i++) {
                const char *dom, *id;
                size_t dn;
                const char *domain = capacity ? d->capacities[i].domain : d->attributes[i].domain;
                const char *name = capacity ? d->capacities[i].name : d->attributes[i].name;
                if (!name) continue;
                split_name(d, domain, name, &dom, &dn, &id);
                cel_value key = cel_str(dom, dn);
                const cel_value *inner = cel_map_get(outer, key);
                cel_map *im;
                if (inner)
                        im = (cel_map *)inner->m;
                else {
                        im = cel_map_new(c, 0);
                        if (!im || cel_map_put(c, outer, key, cel_map_value(im)) < 0) return cel_oom(c);
                }
                cel_value v;
                if (capacity) {
                        v = cel_quantity_value(c, &d->capacities[i].value);
                        if (cel_is_err(v)) return v;
                } else {
                        if (!c->list_types && d->attributes[i].value.type >= DP_CEL_ATTR_INTS)
                                return cel_error(c, "attribute %s: unsupported attribute value", name);
                        v = attr_value(c, &d->attributes[i].value);
                        if (cel_is_err(v)) return cel_error(c, "attribute %s: %s", name, v.err);
                }
                int r = cel_map_put(c, im, cel_str(id, strlen(id)), v);
                if (r == -ENOMEM) return cel_oom(c);
                /* a duplicate name keeps the first value, as the API forbids duplicates */
        }
        return cel_map_value(outer);
}

static cel_value device_field(cel_ctx *c, const dp_cel_device *d, const char *f, bool *found) {
        *found = true;
        if (streq(f, "driver")) return cel_str(d->driver ? d->driver : "", d->driver ? strlen(d->driver) : 0);
        if (streq(f, "attributes")) {
                if (c->dev_attrs.kind != CV_MAP) c->dev_attrs = device_map(c, d, false);
                return c->dev_attrs;
        }
        if (streq(f, "capacity")) {
                if (c->dev_caps.kind != CV_MAP) c->dev_caps = device_map(c, d, true);
                return c->dev_caps;
        }
        if (streq(f, "allowMultipleAllocations")) return cel_bool(d->allow_multiple_allocations);
        *found = false;
        return cel_error(c, "no such key: %s", f);
}

/* ---- selection and indexing ---- */
static cel_value select_field(cel_ctx *c, cel_value o, const char *f, bool test_only, bool optional) {
        if (o.kind == CV_OPTIONAL && test_only) {
                if (!o.opt) return cel_bool(false);
                return select_field(c, *o.opt, f, true, false);
        }
        if (o.kind == CV_OPTIONAL && !test_only) {
                if (!o.opt) return opt_none();
                cel_value r = select_field(c, *o.opt, f, false, true);
                return r;
        }
        cel_value key = cel_str(f, strlen(f));
        switch (o.kind) {
        case CV_MAP: {
                const cel_value *v = cel_map_get(o.m, key);
                if (test_only) return cel_bool(v != NULL || o.m->lenient);
                if (optional) {
                        if (v) return opt_of(c, *v);
                        if (o.m->lenient) return opt_of(c, empty_map(c));
                        return opt_none();
                }
                if (v) return *v;
                if (o.m->lenient) return empty_map(c);
                return cel_error(c, "no such key: %s", f);
        }
        case CV_DEVICE: {
                bool found;
                cel_value v = device_field(c, o.dev, f, &found);
                if (test_only) return cel_bool(found);
                if (optional) return found ? opt_of(c, v) : opt_none();
                return v;
        }
        case CV_ERROR: return o;
        default:
                return cel_error(c, "type '%s' does not support field selection", cel_kind_name(o.kind));
        }
}

static bool index_to_i64(cel_value k, int64_t *ret) {
        if (k.kind == CV_INT) {
                *ret = k.i;
                return true;
        }
        if (k.kind == CV_UINT) {
                if (k.u > INT64_MAX) return false;
                *ret = (int64_t)k.u;
                return true;
        }
        if (k.kind == CV_DOUBLE) {
                if (!(k.d >= -9.2e18 && k.d <= 9.2e18) || k.d != trunc(k.d)) return false;
                *ret = (int64_t)k.d;
                return true;
        }
        return false;
}

static cel_value index_value(cel_ctx *c, cel_value o, cel_value k, bool optional) {
        if (cel_is_err(o)) return o;
        if (cel_is_err(k)) return k;
        if (o.kind == CV_OPTIONAL) {
                if (!o.opt) return opt_none();
                return index_value(c, *o.opt, k, true);
        }
        if (o.kind == CV_LIST) {
                int64_t i;
                if (!index_to_i64(k, &i)) {
                        if (k.kind == CV_DOUBLE || k.kind == CV_UINT) return cel_error(c, "unsupported index value");
                        return cel_no_overload(c, "_[_]");
                }
                if (i < 0 || (uint64_t)i >= o.l->n) {
                        if (optional) return opt_none();
                        return cel_error(c, "index out of bounds: %lld", (long long)i);
                }
                cel_value v = cel_list_at(o.l, (size_t)i);
                return optional ? opt_of(c, v) : v;
        }
        if (o.kind == CV_MAP) {
                if (k.kind != CV_STRING && k.kind != CV_INT && k.kind != CV_UINT && k.kind != CV_BOOL && k.kind != CV_DOUBLE)
                        return cel_error(c, "unsupported key type");
                const cel_value *v = cel_map_get(o.m, k);
                if (v) return optional ? opt_of(c, *v) : *v;
                if (o.m->lenient) {
                        cel_value em = empty_map(c);
                        return optional ? opt_of(c, em) : em;
                }
                if (optional) return opt_none();
                if (k.kind == CV_STRING) return cel_error(c, "no such key: %.*s", (int)DP_MIN(k.s.n, 200), k.s.p);
                dp_strbuf sb = DP_STRBUF_INIT;
                cel_value_format(&sb, k);
                cel_value r = dp_strbuf_failed(&sb) ? cel_oom(c) : cel_error(c, "no such key: %s", dp_strbuf_str(&sb));
                dp_strbuf_done(&sb);
                return r;
        }
        if (o.kind == CV_DEVICE && k.kind == CV_STRING) {
                char *f = cel_strndup(c->arena, k.s.p, k.s.n);
                if (!f) return cel_oom(c);
                return select_field(c, o, f, false, optional);
        }
        return cel_no_overload(c, optional ? "_[?_]" : "_[_]");
}

/* ---- logic ---- */
static cel_value eval_logic(cel_ctx *c, const cel_expr *e, const frame *f, bool is_and) {
        /* commutative: a decisive value on either side wins over an error */
        cel_value l = eval(c, e->call.args[0], f);
        if (c->fatal) return fatal_val();
        if (l.kind == CV_BOOL && l.b != is_and) return l;
        cel_value r = eval(c, e->call.args[1], f);
        if (c->fatal) return fatal_val();
        if (r.kind == CV_BOOL && r.b != is_and) return r;
        if (l.kind == CV_BOOL && r.kind == CV_BOOL) return cel_bool(is_and);
        if (cel_is_err(l)) return l;
        if (l.kind == CV_UNKNOWN) return l;
        if (l.kind != CV_BOOL) return cel_no_overload(c, is_and ? "_&&_" : "_||_");
        if (cel_is_err(r)) return r;
        return cel_no_overload(c, is_and ? "_&&_" : "_||_");
}

/* ---- comprehension ---- */
static cel_value eval_comp(cel_ctx *c, const cel_expr *e, const frame *f) {
        cel_value range = eval(c, e->comp.range, f);
        if (c->fatal || cel_is_err(range)) return range;
        if (range.kind != CV_LIST && range.kind != CV_MAP)
                return cel_error(c, "got '%s', expected iterable type", cel_kind_name(range.kind));
        frame accu = {e->comp.accu_var, eval(c, e->comp.accu_init, f), f};
        if (c->fatal) return fatal_val();
        frame v1 = {e->comp.iter_var, cel_null(), &accu};
        frame v2 = {e->comp.iter_var2 ? e->comp.iter_var2 : "", cel_null(), &v1};
        const frame *inner = e->comp.iter_var2 ? &v2 : &v1;
        size_t n = range.kind == CV_LIST ? range.l->n : range.m->n;
        for (size_t i = 0; i < n; i++) {
                if (range.kind == CV_LIST) {
                        if (e->comp.iter_var2) {
                                v1.value = cel_int((int64_t)i);
                                v2.value = cel_list_at(range.l, i);
                        } else
                                v1.value = cel_list_at(range.l, i);
                } else {
                        v1.value = range.m->store->keys[i];
                        v2.value = range.m->store->vals[i];
                }
                cel_value cond = eval(c, e->comp.cond, inner);
                if (c->fatal) return fatal_val();
                if (cond.kind == CV_BOOL && !cond.b) break;
                if (cond.kind != CV_BOOL) {
                        if (cel_is_err(cond)) return cond;
                        return cel_no_overload(c, "loop condition");
                }
                accu.value = eval(c, e->comp.step, inner);
                if (c->fatal) return fatal_val();
        }
        return eval(c, e->comp.result, &accu);
}

/* ---- calls ---- */
static bool sig_arg_match(const char **pp, cel_value v) {
        const char *p = *pp;
        size_t n = strcspn(p, ",(-");
        bool ok;
#define IS(s) (n == strlen(s) && !strncmp(p, s, n))
        if (IS("A") || IS("B") || IS("dyn")) ok = true;
        else if (IS("int")) ok = v.kind == CV_INT;
        else if (IS("uint")) ok = v.kind == CV_UINT;
        else if (IS("double")) ok = v.kind == CV_DOUBLE;
        else if (IS("bool")) ok = v.kind == CV_BOOL;
        else if (IS("string")) ok = v.kind == CV_STRING;
        else if (IS("bytes")) ok = v.kind == CV_BYTES;
        else if (IS("null_type")) ok = v.kind == CV_NULL;
        else if (IS("list")) ok = v.kind == CV_LIST;
        else if (IS("map")) ok = v.kind == CV_MAP;
        else if (IS("type")) ok = v.kind == CV_TYPE;
        else if (IS("optional")) ok = v.kind == CV_OPTIONAL;
        else if (IS("Quantity")) ok = v.kind == CV_QUANTITY;
        else if (IS("Semver")) ok = v.kind == CV_SEMVER;
        else if (IS("IP")) ok = v.kind == CV_IP;
        else if (IS("CIDR")) ok = v.kind == CV_CIDR;
        else if (IS("URL")) ok = v.kind == CV_URL;
        else ok = false;
#undef IS
        p += n;
        if (*p == '(') {
                int depth = 0;
                do {
                        if (*p == '(') depth++;
                        else if (*p == ')') depth--;
                        p++;
                } while (depth > 0 && *p);
        }
        if (*p == ',') p++;
        *pp = p;
        return ok;
}

static bool sig_match(const char *sig, const cel_value *args, size_t n) {
        const char *p = sig;
        for (size_t i = 0; i < n; i++) {
                if (*p == '-' || !*p) return false;
                if (!sig_arg_match(&p, args[i])) return false;
        }
        return *p == '-' || !*p;
}

static uint64_t call_cost(const cel_overload *o, const cel_value *a, size_t n) {
        switch (o->cost) {
        case COST_STR0: return (uint64_t)cel_ceil01(vsize(a[0]));
        case COST_STRSUM: return (uint64_t)cel_ceil01(vsize(a[0]) + (n > 1 ? vsize(a[1]) : 0));
        case COST_STRPROD: return (uint64_t)cel_ceil01(vsize(a[0])) * (uint64_t)cel_ceil01(n > 1 ? vsize(a[1]) : 0);
        case COST_REGEX:
                return (uint64_t)cel_ceil01(1 + vsize(a[0])) * (uint64_t)cel_ceil((double)(n > 1 ? vsize(a[1]) : 0) * 0.25);
        case COST_LIST0: return DP_MAX((uint64_t)1, vsize(a[0]));
        case COST_LIST1: return n > 1 ? vsize(a[1]) : 1;
        case COST_EQ: return (uint64_t)cel_ceil01(DP_MIN(vsize(a[0]), vsize(a[1])));
        case COST_STR0X2: return (uint64_t)cel_ceil((double)vsize(a[0]) * 0.2);
        case COST_INT0: return a[0].kind == CV_INT && a[0].i > 0 ? (uint64_t)a[0].i : 1;
        case COST_SELFCMP0:
        case COST_SELFCMP1: {
                cel_value l = a[o->cost == COST_SELFCMP0 ? 0 : 1];
                if (l.kind != CV_LIST) return 11;
                double sz = (double)l.l->n, f = 2.0;
                if (l.l->n && (cel_list_at(l.l, 0).kind == CV_STRING || cel_list_at(l.l, 0).kind == CV_BYTES)) f += 0.1;
                return (uint64_t)(sz * sz * f) + 11;
        }
        case COST_LISTOUT:
                if (n == 1 && a[0].kind == CV_INT) return (a[0].i > 0 ? (uint64_t)a[0].i : 0) + 11; /* lists.range */
                if (n == 3 && a[1].kind == CV_INT && a[2].kind == CV_INT && a[2].i >= a[1].i && a[1].i >= 0)
                        return (uint64_t)(a[2].i - a[1].i) + 11; /* slice */
                return vsize(a[0]) + 11;
        case COST_FLATTEN: {
                uint64_t depth = n > 1 && a[1].kind == CV_INT ? (a[1].i > 0 ? (uint64_t)a[1].i : 0) : 1;
                return depth * vsize(a[0]) + 11;
        }
        default: return 1;
        }
}

static cel_value dispatch(cel_ctx *c, const cel_expr *e, const cel_value *args, size_t n) {
        for (size_t i = 0; i < e->call.ncands; i++) {
                const cel_overload *o = e->call.cands[i];
                if (!sig_match(o->sig, args, n)) continue;
                if (!charge(c, call_cost(o, args, n))) return fatal_val();
                c->call_regex = e->call.regex;
                cel_value r = o->impl(c, args, n);
                c->call_regex = NULL;
                return r;
        }
        if (!charge(c, 1)) return fatal_val();
        if (!e->call.ncands) return cel_error(c, "no such overload: %s", e->call.fn);
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_printf(&sb, "no such overload: %s(", e->call.fn);
        for (size_t i = 0; i < n; i++) dp_strbuf_printf(&sb, "%s%s", i ? ", " : "", cel_kind_name(args[i].kind));
        dp_strbuf_putc(&sb, ')');
        cel_value r = dp_strbuf_failed(&sb) ? cel_oom(c) : cel_error(c, "%s", dp_strbuf_str(&sb));
        dp_strbuf_done(&sb);
        return r;
}

cel_value cel_call_overload(cel_ctx *c, const char *fn, const cel_value *args, size_t n) {
        const cel_overload *tables[] = {cel_std_overloads, cel_strings_overloads, cel_lists_overloads, cel_k8s_overloads,
                                        cel_net_overloads};
        for (size_t t = 0; t < ELEMENTSOF(tables); t++)
                for (const cel_overload *o = tables[t]; o->fn; o++)
                        if (streq(o->fn, fn) && cel_sig_nargs(o->sig) == n && sig_match(o->sig, args, n))
                                return o->impl(c, args, n);
        return cel_no_overload(c, fn);
}

static cel_value apply_call(cel_ctx *c, const cel_expr *e, const cel_value *args, size_t n);

static cel_value eval_call(cel_ctx *c, const cel_expr *e, const frame *f) {
        if (!e->call.target) {
                if (e->call.op == CEL_OP_AND) return eval_logic(c, e, f, true);
                if (e->call.op == CEL_OP_OR) return eval_logic(c, e, f, false);
                if (e->call.op == CEL_OP_COND) {
                        cel_value cond = eval(c, e->call.args[0], f);
                        if (c->fatal || cel_is_err(cond)) return cond;
                        if (cond.kind != CV_BOOL) return cel_no_overload(c, "_?_:_");
                        return eval(c, e->call.args[cond.b ? 1 : 2], f);
                }
                /* cel-go plans `x in []` (an empty list literal) as false: x is not evaluated */
                if (e->call.op == CEL_OP_IN && e->call.nargs == 2 && e->call.args[1]->kind == CE_LIST &&
                    e->call.args[1]->list.n == 0) {
                        if (!charge(c, 1)) return fatal_val();
                        return cel_bool(false);
                }
                if (e->call.op == CEL_OP_NOT_STRICTLY_FALSE) {
                        cel_value v = eval(c, e->call.args[0], f);
                        if (c->fatal) return fatal_val();
                        if (!charge(c, 1)) return fatal_val();
                        return cel_bool(!(v.kind == CV_BOOL && !v.b));
                }
        }
        cel_value stackargs[8];
        size_t n = e->call.nargs + (e->call.target ? 1 : 0);
        cel_value *args = stackargs;
        if (n > ELEMENTSOF(stackargs)) {
                args = cel_alloc(c->arena, n * sizeof(cel_value));
                if (!args) return cel_oom(c);
        }
        size_t k = 0;
        if (e->call.target) args[k++] = eval(c, e->call.target, f);
        if (c->fatal) return fatal_val();
        /* cel-go evaluates the alternative of or()/orValue() only when the
         * optional is empty */
        if (k == 1 && e->call.nargs == 1 && args[0].kind == CV_OPTIONAL && args[0].opt &&
            (streq(e->call.fn, "orValue") || streq(e->call.fn, "or"))) {
                if (!charge(c, 1)) return fatal_val();
                return streq(e->call.fn, "orValue") ? *args[0].opt : args[0];
        }
        for (size_t i = 0; i < e->call.nargs; i++) {
                args[k++] = eval(c, e->call.args[i], f);
                if (c->fatal) return fatal_val();
        }
        for (size_t i = 0; i < n; i++)
                if (cel_is_err(args[i])) {
                        /* cel-go still charges the call whose argument failed */
                        if (!charge(c, 1)) return fatal_val();
                        return args[i];
                }
        return apply_call(c, e, args, n);
}

/* The call on its evaluated arguments. Out of eval_call() so that its
 * locals are not part of every recursion level's frame. */
static CEL_NOINLINE cel_value apply_call(cel_ctx *c, const cel_expr *e, const cel_value *args, size_t n) {
        const char *fn = e->call.fn;
        if (!e->call.target) {
                if (e->call.op == CEL_OP_INDEX || e->call.op == CEL_OP_OPT_INDEX) {
                        if (!charge(c, 1)) return fatal_val();
                        return index_value(c, args[0], args[1], e->call.op == CEL_OP_OPT_INDEX);
                }
                if (e->call.op == CEL_OP_EQ || e->call.op == CEL_OP_NE) {
                        if (!charge(c, (uint64_t)cel_ceil01(DP_MIN(vsize(args[0]), vsize(args[1]))))) return fatal_val();
                        int r = cel_value_equal(args[0], args[1]);
                        /* cel-go: `==` fails where Equal fails, `!=` is "not True" */
                        if (r < 0 && e->call.op == CEL_OP_EQ) return cel_no_overload(c, fn);
                        return cel_bool(e->call.op == CEL_OP_EQ ? r == 1 : r != 1);
                }
                if (e->call.op == CEL_OP_IN) {
                        if (args[1].kind == CV_LIST) {
                                if (!charge(c, args[1].l->n)) return fatal_val();
                                for (size_t i = 0; i < args[1].l->n; i++)
                                        if (cel_value_equal_lhs(args[0], cel_list_at(args[1].l, i)) == 1) return cel_bool(true);
                                return cel_bool(false);
                        }
                        if (args[1].kind == CV_MAP) {
                                if (!charge(c, 1)) return fatal_val();
                                return cel_bool(cel_map_get(args[1].m, args[0]) != NULL);
                        }
                        if (!charge(c, 1)) return fatal_val();
                        return cel_no_overload(c, "@in");
                }
                if (e->call.op == CEL_OP_MAP_INSERT) {
                        /* accumulator of transformMap: extend in place when unshared */
                        if (args[0].kind != CV_MAP) return cel_no_overload(c, fn);
                        cel_value k2, v2;
                        if (n == 3) {
                                k2 = args[1];
                                v2 = args[2];
                                cel_map *m = (cel_map *)args[0].m;
                                cel_map *nm = cel_alloc(c->arena, sizeof(*nm));
                                if (!nm) return cel_oom(c);
                                if (m->n != m->store->used) return cel_error(c, "map accumulator shared");
                                *nm = *m;
                                int r = cel_map_put(c, nm, k2, v2);
                                if (r == -EEXIST) return cel_error(c, "insert failed: key already exists");
                                if (r < 0) return cel_oom(c);
                                if (!charge(c, 1)) return fatal_val();
                                return cel_map_value(nm);
                        }
                        if (args[1].kind != CV_MAP) return cel_no_overload(c, fn);
                        cel_map *nm = cel_alloc(c->arena, sizeof(*nm));
                        if (!nm) return cel_oom(c);
                        *nm = *args[0].m;
                        for (size_t i = 0; i < args[1].m->n; i++) {
                                int r = cel_map_put(c, nm, args[1].m->store->keys[i], args[1].m->store->vals[i]);
                                if (r == -EEXIST) return cel_error(c, "insert failed: key already exists");
                                if (r < 0) return cel_oom(c);
                        }
                        if (!charge(c, 1)) return fatal_val();
                        return cel_map_value(nm);
                }
        }
        return dispatch(c, e, args, n);
}

static cel_value eval_list(cel_ctx *c, const cel_expr *e, const frame *f) {
        cel_list *l = cel_list_new(c, e->list.n);
        if (!l) return cel_oom(c);
        for (size_t i = 0; i < e->list.n; i++) {
                cel_value v = eval(c, e->list.elems[i], f);
                if (c->fatal) return fatal_val();
                if (cel_is_err(v)) return v;
                if (e->list.optional && e->list.optional[i]) {
                        if (v.kind != CV_OPTIONAL) return cel_error(c, "cannot initialize optional list element from non-optional value");
                        if (!v.opt) continue;
                        v = *v.opt;
                }
                if (cel_list_push(c, l, v) < 0) return cel_oom(c);
        }
        if (!charge(c, 10)) return fatal_val();
        return cel_list_value(l);
}

static cel_value eval_map(cel_ctx *c, const cel_expr *e, const frame *f) {
        cel_map *m = cel_map_new(c, e->map.n);
        if (!m) return cel_oom(c);
        for (size_t i = 0; i < e->map.n; i++) {
                cel_value k = eval(c, e->map.entries[i].key, f);
                if (c->fatal) return fatal_val();
                if (cel_is_err(k)) return k;
                cel_value v = eval(c, e->map.entries[i].value, f);
                if (c->fatal) return fatal_val();
                if (cel_is_err(v)) return v;
                /* upstream takes any key (docs/cel.md) */
                if (e->map.entries[i].optional) {
                        if (v.kind != CV_OPTIONAL) return cel_error(c, "cannot initialize optional entry from non-optional value");
                        if (!v.opt) continue;
                        v = *v.opt;
                }
                /* a repeated key: the later value wins, as in Kubernetes' cel-go
                 * (the CEL spec says error; docs/cel.md) */
                if (cel_map_set(c, m, k, v) < 0) return cel_oom(c);
        }
        if (!charge(c, 30)) return fatal_val();
        return cel_map_value(m);
}

static cel_value eval(cel_ctx *c, const cel_expr *e, const frame *f) {
        if (c->fatal) return fatal_val();
        if (c->arena->failed) return cel_oom(c);
        switch (e->kind) {
        case CE_CONST: return e->c;
        case CE_IDENT: {
                if (!charge(c, 1)) return fatal_val();
                const cel_value *v = lookup(c, e->ident.slot == -2 ? NULL : f, e->ident.name);
                if (v) return *v;
                const cel_type *t = NULL;
                if (e->type && e->type->kind == CT_TYPE) t = e->type->p[0];
                if (t) return cel_typev(t);
                return cel_error(c, "no such attribute: %s", e->ident.name);
        }
        case CE_SELECT: {
                cel_value o = eval(c, e->sel.operand, f);
                if (c->fatal) return fatal_val();
                if (!charge(c, 1)) return fatal_val();
                if (cel_is_err(o)) return o;
                return select_field(c, o, e->sel.field, e->sel.test_only, e->sel.optional);
        }
        case CE_CALL: return eval_call(c, e, f);
        case CE_LIST: return eval_list(c, e, f);
        case CE_MAP: return eval_map(c, e, f);
        case CE_STRUCT:
                if (!charge(c, 40)) return fatal_val();
                return cel_error(c, "message construction is not supported: %s", e->map.type_name);
        case CE_COMPREHENSION: return eval_comp(c, e, f);
        }
        return cel_error(c, "bad expression");
}

cel_value cel_eval(cel_ctx *c, const cel_ast *ast) {
        cel_value v = eval(c, ast->root, NULL);
        if (c->fatal) return (cel_value){.kind = CV_ERROR, .err = c->fatal_msg};
        return v;
}

cel_value cel_make_device(cel_ctx *c, const dp_cel_device *d);
cel_value cel_make_device(cel_ctx *c, const dp_cel_device *d) {
        (void)c;
        return (cel_value){.kind = CV_DEVICE, .dev = d};
}

/* exposed for the library files */
cel_value cel_opt_of(cel_ctx *c, cel_value v);
cel_value cel_opt_of(cel_ctx *c, cel_value v) { return opt_of(c, v); }
