/* SPDX-License-Identifier: Apache-2.0
 * One worker thread for long pure work (see offload.h): a queue of jobs
 * and a queue of results under one mutex, an eventfd (a semaphore: one
 * count per result) to bring results back to the loop one per turn. */
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>

#include "base/macros.h"
#include "kube/offload.h"

typedef struct item {
        struct item *next;
        char *data; /* a job's copy */
        size_t len;
        void *result;
        uint64_t tag;
} item;

typedef struct queue {
        item *head, *tail;
} queue;

struct dp_kube_offload {
        dp_loop *loop;
        dp_kube_offload_work_fn work;
        dp_kube_offload_done_fn done;
        dp_kube_offload_free_fn free_result;
        void *userdata;
        int efd;
        dp_loop_source *io;
        pthread_t thread;
        bool started, quit;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        queue jobs, results;
};

static void push(queue *q, item *it) {
        it->next = NULL;
        if (q->tail)
                q->tail->next = it;
        else
                q->head = it;
        q->tail = it;
}

static item *pop(queue *q) {
        item *it = q->head;
        if (it && !(q->head = it->next)) q->tail = NULL;
        return it;
}

static void *worker(void *arg) {
        dp_kube_offload *o = arg;
        pthread_mutex_lock(&o->lock);
        for (;;) {
                while (!o->jobs.head && !o->quit)
                        pthread_cond_wait(&o->cond, &o->lock);
                if (o->quit) break;
                item *it = pop(&o->jobs);
                pthread_mutex_unlock(&o->lock);
                it->result = o->work(it->data, it->len, it->tag);
                free(TAKE_PTR(it->data));
                pthread_mutex_lock(&o->lock);
                push(&o->results, it);
                uint64_t one = 1;
                (void)!write(o->efd, &one, sizeof one);
        }
        pthread_mutex_unlock(&o->lock);
        return NULL;
}

/* One result per turn (the eventfd counts them). */
static int on_result(dp_loop_source *s, int fd, uint32_t events, void *userdata) {
        dp_kube_offload *o = userdata;
        uint64_t n;
        if (read(fd, &n, sizeof n) != sizeof n) return 0;
        pthread_mutex_lock(&o->lock);
        item *it = pop(&o->results);
        pthread_mutex_unlock(&o->lock);
        if (!it) return 0;
        void *res = it->result;
        uint64_t tag = it->tag;
        free(it);
        o->done(res, tag, o->userdata); /* may submit or free o */
        return 0;
}

int dp_kube_offload_new(dp_loop *l, dp_kube_offload_work_fn work, dp_kube_offload_done_fn done,
                        dp_kube_offload_free_fn free_result, void *userdata, dp_kube_offload **ret) {
        assert_return(l && work && done && free_result && ret, -EINVAL);
        _cleanup_(dp_kube_offload_freep) dp_kube_offload *o = calloc(1, sizeof *o);
        if (!o) return -ENOMEM;
        *o = (dp_kube_offload){
                .loop = l, .work = work, .done = done, .free_result = free_result, .userdata = userdata, .efd = -1};
        pthread_mutex_init(&o->lock, NULL);
        pthread_cond_init(&o->cond, NULL);
        o->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC | EFD_SEMAPHORE);
        int r = o->efd < 0 ? -errno : dp_loop_add_io(l, o->efd, EPOLLIN, on_result, o, &o->io);
        if (r < 0) return r;
        *ret = TAKE_PTR(o);
        return 0;
}

dp_kube_offload *dp_kube_offload_free(dp_kube_offload *o) {
        if (!o) return NULL;
        if (o->started) {
                pthread_mutex_lock(&o->lock);
                o->quit = true;
                pthread_cond_signal(&o->cond);
                pthread_mutex_unlock(&o->lock);
                pthread_join(o->thread, NULL);
        }
        item *it;
        while ((it = pop(&o->jobs))) {
                free(it->data);
                free(it);
        }
        while ((it = pop(&o->results))) {
                o->free_result(it->result, it->tag);
                free(it);
        }
        dp_loop_source_free(o->io);
        if (o->efd >= 0) close(o->efd);
        pthread_cond_destroy(&o->cond);
        pthread_mutex_destroy(&o->lock);
        free(o);
        return NULL;
}

int dp_kube_offload_submit(dp_kube_offload *o, const char *data, size_t len, uint64_t tag) {
        assert_return(o && (data || !len), -EINVAL);
        item *it = calloc(1, sizeof *it);
        char *copy = malloc(len + 1);
        if (!it || !copy) {
                dp_free_many(it, copy);
                return -ENOMEM;
        }
        memcpy(copy, data, len);
        copy[len] = 0;
        *it = (item){.data = copy, .len = len, .tag = tag};
        if (!o->started) {
                /* the worker takes no signals: the loop's signalfd does */
                sigset_t all, old;
                sigfillset(&all);
                pthread_sigmask(SIG_SETMASK, &all, &old);
                int r = pthread_create(&o->thread, NULL, worker, o);
                pthread_sigmask(SIG_SETMASK, &old, NULL);
                if (r != 0) {
                        dp_free_many(copy, it);
                        return -EAGAIN;
                }
                o->started = true;
        }
        pthread_mutex_lock(&o->lock);
        push(&o->jobs, it);
        pthread_cond_signal(&o->cond);
        pthread_mutex_unlock(&o->lock);
        return 0;
}
