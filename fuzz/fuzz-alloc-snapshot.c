/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the allocator over small random snapshots and claims. The allocator
 * must never crash; every allocation it returns must pass an independent
 * verifier written from the rules (dra-semantics §1b), and when it says "no"
 * a brute-force enumeration over the same tiny instance must agree. */
#include <stdio.h>

#include "../tests/alloc/alloc-test-util.h"

#define MAXD 7

typedef struct fdev {
        int node;    /* -1: all nodes */
        int pool;    /* 0..2 */
        int a, b;    /* attribute values 0..2, -1 missing */
        bool taint;  /* NoSchedule bad=x */
        bool multi;  /* allowMultipleAllocations with capacity mem */
        int cap;     /* mem capacity (multi only) */
        int set;     /* counter set of the pool, -1 none */
        int use;     /* counter units */
        int groups;  /* bit 0: g0, bit 1: g1 */
        tdev user;
        int committed;
        int cap_used;
} fdev;

typedef struct freq {
        int sel; /* 0 any, 1 a==0, 2 a==1 */
        int count;
        bool all, admin, tolerate;
        int capreq;
        bool fa; /* firstAvailable: second entry any/count 1 */
} freq;

typedef struct inst {
        fdev d[MAXD];
        int nd;
        int n_nodes;
        bool incomplete[3];
        int setval[3][2];
        freq r[3];
        int nr;
        int cons; /* 0 none, 1 match a, 2 distinct b */
        bool admin_ok;
} inst;

typedef struct pick {
        int req, sub, dev;
} pick;

static uint8_t take(const uint8_t **p, size_t *n) {
        if (!*n) return 0;
        (*n)--;
        return *(*p)++;
}

static tsel sels[3] = {{"*", ""}, {"a", "0"}, {"a", "1"}};

static bool reach(const inst *I, int dev, int node) {
        const fdev *d = &I->d[dev];
        if (I->incomplete[d->pool]) return false;
        return d->node < 0 || d->node == node;
}

static bool selected(const inst *I, int dev, const freq *r, int sub) {
        int sel = sub == 1 ? 0 : r->sel;
        dp_error e = DP_ERROR_INIT;
        return tsel_fn(NULL, &sels[sel], (void *)&I->d[dev].user, &e) == 1;
}

static bool usable_static(const inst *I, int dev, const freq *r, int sub) {
        const fdev *d = &I->d[dev];
        if (!selected(I, dev, r, sub)) return false;
        if (d->taint && !r->tolerate) return false;
        /* capacity asked of a device that lacks it, or cannot give that much */
        if (r->capreq && (!d->multi || d->cap < r->capreq)) return false;
        return true;
}

/* The independent check of one complete assignment. */
static bool verify(const inst *I, int node, const pick *p, int np) {
        int per_req[3] = {0}, subs[3] = {-1, -1, -1};
        int uses[MAXD] = {0}, admin_uses[MAXD] = {0}, capsum[MAXD] = {0};
        if (np > 32) return false;
        for (int i = 0; i < np; i++) {
                const freq *r = &I->r[p[i].req];
                int dev = p[i].dev;
                if (!reach(I, dev, node)) return false;
                if (!usable_static(I, dev, r, p[i].sub)) return false;
                if (subs[p[i].req] >= 0 && subs[p[i].req] != p[i].sub) return false;
                subs[p[i].req] = p[i].sub;
                per_req[p[i].req]++;
                uses[dev]++;
                bool admin = r->admin && p[i].sub == 0;
                if (admin) {
                        admin_uses[dev]++;
                        if (!I->admin_ok) return false;
                }
                if (I->d[dev].multi) {
                        /* an adminAccess share of a multi-allocatable device takes
                         * capacity within the call too, as upstream (it is not
                         * counted once committed) */
                        int want = r->capreq ? r->capreq : I->d[dev].cap;
                        capsum[dev] += want;
                } else if (!admin && I->d[dev].committed) {
                        return false;
                }
                for (int j = 0; j < i; j++)
                        if (p[j].dev == dev && p[j].req == p[i].req) return false; /* one request, one device once */
        }
        for (int dev = 0; dev < I->nd; dev++) {
                if (admin_uses[dev] && uses[dev] > 1 && !I->d[dev].multi) return false;
                if (!I->d[dev].multi && uses[dev] > 1) return false;
                if (I->d[dev].multi && I->d[dev].cap_used + capsum[dev] > I->d[dev].cap) return false;
        }
        for (int q = 0; q < I->nr; q++) {
                const freq *r = &I->r[q];
                int sub = subs[q] < 0 ? 0 : subs[q];
                bool all = r->all && sub == 0;
                if (all) {
                        /* upstream's "all": every matching device whose capacity
                         * can take the request (a shared device with no room left
                         * is left out); one tainted and not tolerated refuses it */
                        int want = 0;
                        for (int dev = 0; dev < I->nd; dev++) {
                                const fdev *d = &I->d[dev];
                                if (!reach(I, dev, node) || !selected(I, dev, r, sub)) continue;
                                if (r->capreq && (!d->multi || d->cap < r->capreq)) continue;
                                if (d->multi && d->cap_used + (r->capreq ? r->capreq : d->cap) > d->cap) continue;
                                if (d->taint && !r->tolerate) return false;
                                want++;
                        }
                        for (int k = 0; k < 3; k++)
                                if (I->incomplete[k]) {
                                        for (int dev = 0; dev < I->nd; dev++)
                                                if (I->d[dev].pool == k && (I->d[dev].node < 0 || I->d[dev].node == node))
                                                        return false;
                                }
                        if (want == 0 || per_req[q] != want) return false;
                } else {
                        int want = sub == 1 ? 1 : r->count;
                        if (per_req[q] != want) return false;
                }
        }
        /* counters and groups: committed devices plus first shares of new ones */
        for (int pool = 0; pool < 3; pool++)
                for (int set = 0; set < 2; set++) {
                        int sum = 0, inter = 3, n_users = 0, n_nogroup = 0;
                        for (int dev = 0; dev < I->nd; dev++) {
                                const fdev *d = &I->d[dev];
                                if (d->pool != pool || d->set != set) continue;
                                bool user = d->committed > 0 || (uses[dev] > admin_uses[dev]);
                                if (!user) continue;
                                sum += d->use;
                                n_users++;
                                if (!d->groups) n_nogroup++;
                                inter &= d->groups;
                        }
                        if (sum > I->setval[pool][set]) return false;
                        if (n_users > 1 && n_nogroup != n_users && (n_nogroup || !inter)) return false;
                }
        /* constraints over every device of the claim */
        if (I->cons)
                for (int i = 0; i < np; i++) {
                        int vi = I->cons == 1 ? I->d[p[i].dev].a : I->d[p[i].dev].b;
                        if (vi < 0) return false;
                        for (int j = 0; j < i; j++) {
                                int vj = I->cons == 1 ? I->d[p[j].dev].a : I->d[p[j].dev].b;
                                if (I->cons == 1 && vi != vj) return false;
                                if (I->cons == 2 && vi == vj) return false;
                        }
                }
        return true;
}

/* Brute force: every choice of entry and every set of devices per request. */
static bool brute(const inst *I, int node, int q, pick *p, int np) {
        if (q == I->nr) return verify(I, node, p, np);
        const freq *r = &I->r[q];
        for (int sub = 0; sub < (r->fa ? 2 : 1); sub++) {
                int want = sub == 1 ? 1 : r->count;
                if (r->all && sub == 0) {
                        int n = np;
                        for (int dev = 0; dev < I->nd; dev++)
                                if (reach(I, dev, node) && usable_static(I, dev, r, sub)) p[n++] = (pick){q, sub, dev};
                        if (brute(I, node, q + 1, p, n)) return true;
                        continue;
                }
                /* subsets of size want, by bitmask */
                for (int mask = 0; mask < (1 << I->nd); mask++) {
                        if (__builtin_popcount(mask) != want) continue;
                        int n = np;
                        for (int dev = 0; dev < I->nd; dev++)
                                if (mask & (1 << dev)) p[n++] = (pick){q, sub, dev};
                        if (brute(I, node, q + 1, p, n)) return true;
                }
        }
        return false;
}

static void build(const inst *I, dp_alloc_snapshot *s) {
        static const char *gname[2] = {"g0", "g1"};
        for (int pool = 0; pool < 3; pool++) {
                char pn[8];
                snprintf(pn, sizeof(pn), "p%d", pool);
                int nslices = 1;
                for (int node = -1; node < I->n_nodes; node++) {
                        bool any = false;
                        for (int i = 0; i < I->nd; i++) any |= I->d[i].pool == pool && I->d[i].node == node;
                        nslices += any;
                }
                int64_t count = nslices + (I->incomplete[pool] ? 1 : 0);
                dp_alloc_counter c0 = {"c", QN(I->setval[pool][0])}, c1 = {"c", QN(I->setval[pool][1])};
                dp_alloc_counter_set sets[2] = {{"s0", &c0, 1}, {"s1", &c1, 1}};
                dp_alloc_slice_spec cs = {.name = "counters", .driver = "x.com", .pool = pn, .generation = 1,
                                          .slice_count = count, .counter_sets = sets,
                                          .n_counter_sets = 2};
                dp_alloc_add_slice(s, &cs, NULL);
                /* devices of a pool: one slice per node they live on, plus all-nodes */
                for (int node = -1; node < I->n_nodes; node++) {
                        char sn[16], nn[8];
                        snprintf(sn, sizeof(sn), "devs%d", node + 1);
                        snprintf(nn, sizeof(nn), "n%d", node);
                        bool any = false;
                        for (int i = 0; i < I->nd; i++) any |= I->d[i].pool == pool && I->d[i].node == node;
                        if (!any) continue;
                        dp_alloc_slice_spec ds = {.name = sn, .driver = "x.com", .pool = pn, .generation = 1,
                                                  .slice_count = count,
                                                  .node_name = node >= 0 ? nn : NULL, .all_nodes = node < 0};
                        uint32_t sl;
                        if (dp_alloc_add_slice(s, &ds, &sl) < 0) continue;
                        for (int i = 0; i < I->nd; i++) {
                                const fdev *d = &I->d[i];
                                if (d->pool != pool || d->node != node) continue;
                                dp_alloc_attr at[2];
                                size_t na = 0;
                                char av[4], bv[4];
                                snprintf(av, sizeof(av), "%d", d->a);
                                snprintf(bv, sizeof(bv), "%d", d->b);
                                if (d->a >= 0) at[na++] = (dp_alloc_attr){.name = "a", .type = DP_ALLOC_ATTR_STRING, .s = av};
                                if (d->b >= 0) at[na++] = (dp_alloc_attr){.name = "x.com/b", .type = DP_ALLOC_ATTR_INT, .i = d->b};
                                dp_alloc_capacity cap = {.name = "mem", .value = QN(d->cap)};
                                dp_alloc_counter use = {"c", QN(d->use)};
                                const char *gs[2];
                                size_t ng = 0;
                                for (int g = 0; g < 2; g++)
                                        if (d->groups & (1 << g)) gs[ng++] = gname[g];
                                dp_alloc_consumption cc = {d->set ? "s1" : "s0", &use, 1, gs, ng};
                                dp_alloc_taint t = {"bad", "x", "NoSchedule"};
                                dp_alloc_device_spec sp = {.name = d->user.name, .attrs = at, .n_attrs = na,
                                                           .caps = &cap, .n_caps = d->multi ? 1 : 0,
                                                           .consumes = &cc, .n_consumes = d->set >= 0,
                                                           .taints = &t, .n_taints = d->taint,
                                                           .allow_multiple_allocations = d->multi,
                                                           .user = (void *)&d->user};
                                dp_alloc_add_device(s, sl, &sp, NULL);
                        }
                }
        }
}

/* DP_FUZZ_DEBUG=1 prints the instance before a failed check. */
static void dump(const inst *I, int node, const pick *p, int np, const char *what) {
        if (!getenv("DP_FUZZ_DEBUG")) return;
        fprintf(stderr, "%s on n%d; nodes %d admin_ok %d cons %d incomplete %d%d%d sets %d/%d %d/%d %d/%d\n", what,
                node, I->n_nodes, I->admin_ok, I->cons, I->incomplete[0], I->incomplete[1], I->incomplete[2],
                I->setval[0][0], I->setval[0][1], I->setval[1][0], I->setval[1][1], I->setval[2][0], I->setval[2][1]);
        for (int i = 0; i < I->nd; i++) {
                const fdev *d = &I->d[i];
                fprintf(stderr, "  d%d node %d pool %d a %d b %d taint %d multi %d cap %d set %d use %d groups %d committed %d used %d\n",
                        i, d->node, d->pool, d->a, d->b, d->taint, d->multi, d->cap, d->set, d->use, d->groups,
                        d->committed, d->cap_used);
        }
        for (int q = 0; q < I->nr; q++)
                fprintf(stderr, "  r%d sel %d count %d all %d admin %d tol %d capreq %d fa %d\n", q, I->r[q].sel,
                        I->r[q].count, I->r[q].all, I->r[q].admin, I->r[q].tolerate, I->r[q].capreq, I->r[q].fa);
        for (int i = 0; i < np; i++) fprintf(stderr, "  pick r%d sub %d d%d\n", p[i].req, p[i].sub, p[i].dev);
}

static int dev_index(const inst *I, const char *name) {
        for (int i = 0; i < I->nd; i++)
                if (streq(I->d[i].user.name, name)) return i;
        return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const uint8_t *p = data;
        size_t n = size;
        inst I;
        memset(&I, 0, sizeof(I));
        I.n_nodes = 1 + take(&p, &n) % 2;
        I.nd = 1 + take(&p, &n) % MAXD;
        uint8_t flags = take(&p, &n);
        for (int k = 0; k < 3; k++) {
                I.incomplete[k] = (flags >> k & 1) && (flags & 0x80);
                I.setval[k][0] = take(&p, &n) % 5;
                I.setval[k][1] = take(&p, &n) % 5;
        }
        I.admin_ok = flags & 0x40;
        I.cons = (flags >> 3) % 3;
        for (int i = 0; i < I.nd; i++) {
                fdev *d = &I.d[i];
                uint8_t x = take(&p, &n), y = take(&p, &n), z = take(&p, &n);
                d->node = (int)(x % (I.n_nodes + 1)) - 1;
                d->pool = (x >> 2) % 3;
                d->a = (int)((x >> 4) % 4) - 1;
                d->b = (int)(y % 4) - 1;
                d->taint = (y >> 2) % 5 == 0;
                d->multi = (y >> 5) % 4 == 0;
                d->cap = 1 + z % 4;
                d->set = (int)((z >> 2) % 3) - 1;
                d->use = 1 + (z >> 4) % 3;
                d->groups = (z >> 6) % 4;
                snprintf(d->user.name, sizeof(d->user.name), "d%d", i);
                if (d->a >= 0) {
                        snprintf(d->user.keys[0], 64, "a");
                        snprintf(d->user.vals[0], 64, "%d", d->a);
                        d->user.n = 1;
                }
        }
        I.nr = 1 + take(&p, &n) % 3;
        for (int q = 0; q < I.nr; q++) {
                uint8_t x = take(&p, &n), y = take(&p, &n);
                freq *r = &I.r[q];
                r->sel = x % 3;
                r->count = 1 + (x >> 2) % 3;
                r->all = (x >> 4) % 5 == 0;
                r->admin = (x >> 7) & 1 && y % 3 == 0;
                r->tolerate = y & 1;
                r->capreq = (y >> 1) % 3;
                r->fa = (y >> 3) % 4 == 0;
        }
        dp_alloc_snapshot *s = dp_alloc_snapshot_new();
        if (!s) return 0;
        dp_alloc_set_selector_fn(s, tsel_fn, NULL);
        build(&I, s);
        uint32_t sid[3];
        for (int i = 0; i < 3; i++) dp_alloc_add_selector(s, &sels[i], &sid[i]);
        for (int round = 0; round < 2; round++) {
                dp_alloc_subrequest subs[3][2];
                dp_alloc_request reqs[3];
                dp_alloc_toleration tol = {.key = "bad", .op = "Exists"};
                dp_alloc_capacity_request capr[3];
                char names[3][8];
                for (int q = 0; q < I.nr; q++) {
                        freq *r = &I.r[q];
                        snprintf(names[q], sizeof(names[q]), "r%d", q);
                        capr[q] = (dp_alloc_capacity_request){"mem", QN(r->capreq)};
                        subs[q][0] = (dp_alloc_subrequest){.name = r->fa ? "main" : NULL, .selectors = &sid[r->sel],
                                                           .n_selectors = 1, .all = r->all, .count = r->count,
                                                           .admin_access = r->admin && !r->fa,
                                                           .tolerations = &tol, .n_tolerations = r->tolerate,
                                                           .capacity = &capr[q], .n_capacity = r->capreq > 0};
                        if (r->fa) r->admin = false;
                        subs[q][1] = subs[q][0];
                        subs[q][1].name = "alt";
                        subs[q][1].selectors = &sid[0];
                        subs[q][1].all = false;
                        subs[q][1].count = 1;
                        reqs[q] = (dp_alloc_request){.name = names[q], .first_available = r->fa, .subs = subs[q],
                                                     .n_subs = r->fa ? 2 : 1};
                }
                dp_alloc_constraint ct = {.match_attribute = I.cons == 1 ? "x.com/a" : NULL,
                                          .distinct_attribute = I.cons == 2 ? "x.com/b" : NULL};
                char cname[8];
                snprintf(cname, sizeof(cname), "c%d", round);
                dp_alloc_claim c = {.ns = "ns", .name = cname, .uid = cname, .admin_access_allowed = I.admin_ok,
                                    .requests = reqs, .n_requests = (size_t)I.nr, .constraints = &ct,
                                    .n_constraints = I.cons != 0};
                const dp_alloc_claim *cp = &c;
                for (int node = 0; node < I.n_nodes; node++) {
                        char nn[8];
                        snprintf(nn, sizeof(nn), "n%d", node);
                        dp_alloc_result *res = NULL;
                        dp_strbuf why = DP_STRBUF_INIT;
                        int r = dp_alloc_allocate(s, nn, &cp, 1, &(dp_alloc_options){.max_effort = 200000, .explain = true},
                                                  &res, &why, NULL);
                        if (getenv("DP_FUZZ_DEBUG")) fprintf(stderr, "round %d n%d: r=%d %s\n", round, node, r, dp_strbuf_str(&why));
                        dp_strbuf_done(&why);
                        if (r == -ENOENT) continue; /* node without any slice naming it */
                        pick pk[64];
                        int np = 0;
                        if (r == 1) {
                                for (size_t i = 0; i < res[0].n_devices && np < 64; i++) {
                                        const dp_alloc_device_result *dr = &res[0].devices[i];
                                        pk[np++] = (pick){(int)dr->request_index, (int)dr->sub_index,
                                                          dev_index(&I, dr->device_name)};
                                        if (pk[np - 1].dev < 0) abort();
                                }
                                if (!verify(&I, node, pk, np)) {
                                        dump(&I, node, pk, np, "invalid allocation");
                                        abort();
                                }
                                dp_alloc_commit(s, &c, &res[0]);
                                for (int i = 0; i < np; i++) {
                                        fdev *d = &I.d[pk[i].dev];
                                        bool admin = I.r[pk[i].req].admin && pk[i].sub == 0;
                                        if (admin) continue;
                                        d->committed++;
                                        if (d->multi) d->cap_used += I.r[pk[i].req].capreq ? I.r[pk[i].req].capreq : d->cap;
                                }
                                /* sometimes give it all back: the next round must see a clean slate */
                                if (round == 0 && (flags & 0x20)) {
                                        if (dp_alloc_uncommit(s, &res[0]) < 0) abort();
                                        for (int i = 0; i < np; i++) {
                                                fdev *d = &I.d[pk[i].dev];
                                                bool admin = I.r[pk[i].req].admin && pk[i].sub == 0;
                                                if (admin) continue;
                                                d->committed--;
                                                if (d->multi)
                                                        d->cap_used -= I.r[pk[i].req].capreq ? I.r[pk[i].req].capreq : d->cap;
                                        }
                                }
                                dp_alloc_results_free(res, 1);
                                break;
                        }
                        if (r == 0 && brute(&I, node, 0, pk, 0)) {
                                int bn = 0;
                                for (; bn < 64 && (pk[bn].req || pk[bn].dev || pk[bn].sub); bn++) {}
                                dump(&I, node, pk, 0, "missed allocation");
                                abort();
                        }
                }
        }
        dp_alloc_snapshot_free(s);
        return 0;
}
