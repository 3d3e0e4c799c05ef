/* SPDX-License-Identifier: Apache-2.0
 * Reading one ResourceClaim for NodePrepareResources, with retries. */
#include <stdio.h>

#include "base/log.h"
#include "base/strbuf.h"
#include "kube/kube.h"

struct dp_kube_claim_fetch {
        dp_kube_client *client;
        char *path;
        uint64_t deadline;
        dp_kube_backoff backoff;
        dp_kube_request *req;
        dp_loop_source *retry;
        dp_kube_done_fn done;
        void *userdata;
};

static int fetch_send(dp_kube_claim_fetch *f);

static void on_claim(long status, const char *body, size_t len, const char *errmsg, void *ud) {
        dp_kube_claim_fetch *f = ud;
        f->req = NULL;
        bool transient = status == 0 || status == 429 || status >= 500;
        uint64_t now = dp_loop_now(), wait = dp_kube_backoff_next(&f->backoff);
        if (transient && now + wait < f->deadline) {
                log_info("API GET %s: %s; retrying in %llu ms", f->path, status ? "server busy" : errmsg,
                         (unsigned long long)(wait / 1000));
                if (dp_loop_source_set_time(f->retry, now + wait) >= 0) return;
        }
        f->done(status, body, len, errmsg, f->userdata);
        dp_kube_claim_fetch_cancel(f);
}

static int on_retry(dp_loop_source *s, uint64_t now, void *ud) {
        dp_kube_claim_fetch *f = ud;
        int r = fetch_send(f);
        if (r < 0) {
                f->done(0, "", 0, strerror(-r), f->userdata);
                dp_kube_claim_fetch_cancel(f);
        }
        return 0;
}

static int fetch_send(dp_kube_claim_fetch *f) {
        uint64_t now = dp_loop_now();
        unsigned ms = f->deadline > now ? (unsigned)DP_MIN((f->deadline - now) / 1000, 30000) : 1;
        return dp_kube_request_start(f->client, "GET", f->path, NULL, 0, ms ? ms : 1, on_claim, f, &f->req);
}

int dp_kube_claim_fetch_start(dp_kube_client *c, const char *ns, const char *name, uint64_t deadline_usec,
                              dp_kube_done_fn done, void *userdata, dp_kube_claim_fetch **ret) {
        assert_return(c && ns && name && done && ret, -EINVAL);
        _cleanup_(dp_kube_claim_fetch_cancelp) dp_kube_claim_fetch *f = calloc(1, sizeof *f);
        if (!f) return -ENOMEM;
        f->client = c;
        f->deadline = deadline_usec;
        f->backoff = (dp_kube_backoff)DP_KUBE_BACKOFF_INIT;
        f->backoff.first_usec = 100000;
        f->done = done;
        f->userdata = userdata;
        _cleanup_free_ char *ens = dp_kube_query_escape(ns), *ename = dp_kube_query_escape(name);
        f->path = ens && ename ? dp_asprintf("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", ens, ename)
                               : NULL;
        int r = f->path ? dp_loop_add_timer(dp_kube_client_loop(c), 0, on_retry, f, &f->retry) : -ENOMEM;
        if (r >= 0) r = fetch_send(f);
        if (r < 0) return r;
        *ret = TAKE_PTR(f);
        return 0;
}

dp_kube_claim_fetch *dp_kube_claim_fetch_cancel(dp_kube_claim_fetch *f) {
        if (!f) return NULL;
        dp_kube_request_cancel(f->req);
        dp_loop_source_free(f->retry);
        free(f->path);
        free(f);
        return NULL;
}
