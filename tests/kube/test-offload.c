/* SPDX-License-Identifier: Apache-2.0
 * kube/offload.c: work off the loop, results back on it in order, freeing
 * while the worker works. */
#include "harness.h"
#include "kube/offload.h"

typedef struct seen {
        int n;
        uint64_t tags[8];
        size_t lens[8];
        dp_loop *loop;
        int want;
} seen;

static void *work(const char *data, size_t len, uint64_t tag) {
        (void)tag;
        size_t *r = malloc(sizeof *r);
        ASSERT_TRUE(r != NULL);
        *r = len;
        ASSERT_EQ(data[len], 0); /* a NUL-terminated copy */
        return r;
}

static void free_result(void *result, uint64_t tag) {
        (void)tag;
        free(result);
}

static void done(void *result, uint64_t tag, void *ud) {
        seen *s = ud;
        ASSERT_TRUE(s->n < 8);
        s->tags[s->n] = tag;
        s->lens[s->n] = *(size_t *)result;
        s->n++;
        free(result);
}

static void run_until(dp_loop *l, seen *s, int n) {
        uint64_t end = dp_loop_now() + 20ull * 1000 * 1000;
        while (s->n < n && dp_loop_now() < end)
                dp_loop_run_once(l, 10);
        ASSERT_EQ(s->n, n);
}

TEST(results_come_back_on_the_loop) {
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        seen s = {0};
        dp_kube_offload *o;
        ASSERT_OK(dp_kube_offload_new(l, work, done, free_result, &s, &o));
        ASSERT_OK(dp_kube_offload_submit(o, "hello", 5, 7));
        ASSERT_EQ(s.n, 0); /* never from inside submit */
        run_until(l, &s, 1);
        ASSERT_EQ(s.tags[0], 7);
        ASSERT_EQ(s.lens[0], 5);
        ASSERT_OK(dp_kube_offload_submit(o, "hello, world", 12, 8));
        run_until(l, &s, 2);
        ASSERT_EQ(s.tags[1], 8);
        ASSERT_EQ(s.lens[1], 12);
        dp_kube_offload_free(o);
        dp_loop_free(l);
}

TEST(jobs_come_back_in_order) {
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        seen s = {0};
        dp_kube_offload *o;
        ASSERT_OK(dp_kube_offload_new(l, work, done, free_result, &s, &o));
        for (uint64_t t = 1; t <= 5; t++)
                ASSERT_OK(dp_kube_offload_submit(o, "abcdef", t, t));
        run_until(l, &s, 5);
        for (int i = 0; i < 5; i++) {
                ASSERT_EQ(s.tags[i], i + 1);
                ASSERT_EQ(s.lens[i], i + 1);
        }
        dp_kube_offload_free(o);
        dp_loop_free(l);
}

TEST(freed_with_work_pending) {
        /* LSan checks that the job and the result unread are freed */
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        seen s = {0};
        dp_kube_offload *o;
        ASSERT_OK(dp_kube_offload_new(l, work, done, free_result, &s, &o));
        ASSERT_OK(dp_kube_offload_submit(o, "x", 1, 1));
        ASSERT_OK(dp_kube_offload_submit(o, "y", 1, 2));
        dp_kube_offload_free(o);
        ASSERT_EQ(s.n, 0);
        dp_loop_free(l);
}
