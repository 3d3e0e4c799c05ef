/* SPDX-License-Identifier: Apache-2.0
 * One worker thread for long pure work (see offload.h). Two slots under one
 * mutex: the job waiting to be taken and the result waiting to be read. */
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>

#include "base/macros.h"
#include "kube/offload.h"

struct dp_kube_offload {
        dp_loop *loop;
        dp_kube_offload_work_fn work;
        dp_kube_offload_done_fn done;
        dp_kube_offload_free_fn free_result;
        void *userdata;
        int efd; /* the worker writes it when a result is stored */
        dp_loop_source *io;
        pthread_t thread;
        bool started, quit;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        char *job; /* waiting to be taken, or NULL */
        size_t job_len;
        uint64_t job_tag;
        bool has_result; /* waiting to be read */
        void *result;
        uint64_t result_tag;
};

static void *worker(void *arg) {
        dp_kube_offload *o = arg;
        pthread_mutex_lock(&o->lock);
        for (;;) {
                while (!o->job && !o->quit)
                        pthread_cond_wait(&o->cond, &o->lock);
                if (o->quit) break;
                char *job = TAKE_PTR(o->job);
                size_t len = o->job_len;
                uint64_t tag = o->job_tag;
                pthread_mutex_unlock(&o->lock);
                void *res = o->work(job, len);
                free(job);
                pthread_mutex_lock(&o->lock);
                if (o->has_result) o->free_result(o->result); /* not read yet: a replaced job's */
                o->result = res;
                o->result_tag = tag;
                o->has_result = true;
                uint64_t one = 1;
                (void)!write(o->efd, &one, sizeof one);
        }
        pthread_mutex_unlock(&o->lock);
        return NULL;
}

static int on_result(dp_loop_source *s, int fd, uint32_t events, void *userdata) {
        dp_kube_offload *o = userdata;
        uint64_t n;
        (void)!read(fd, &n, sizeof n);
        pthread_mutex_lock(&o->lock);
        bool has = o->has_result;
        void *res = o->result;
        uint64_t tag = o->result_tag;
        o->has_result = false;
        o->result = NULL;
        pthread_mutex_unlock(&o->lock);
        if (has) o->done(res, tag, o->userdata); /* may submit or free o */
        return 0;
}

int dp_kube_offload_new(dp_loop *l, dp_kube_offload_work_fn work, dp_kube_offload_done_fn done,
                        dp_kube_offload_free_fn free_result, void *userdata, dp_kube_offload **ret) {
        assert_return(l && work && done && free_result && ret, -EINVAL);
        dp_kube_offload *o = calloc(1, sizeof *o);
        if (!o) return -ENOMEM;
        *o = (dp_kube_offload){
                .loop = l, .work = work, .done = done, .free_result = free_result, .userdata = userdata, .efd = -1};
        pthread_mutex_init(&o->lock, NULL);
        pthread_cond_init(&o->cond, NULL);
        o->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        int r = o->efd < 0 ? -errno : dp_loop_add_io(l, o->efd, EPOLLIN, on_result, o, &o->io);
        if (r < 0) {
                dp_kube_offload_free(o);
                return r;
        }
        *ret = o;
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
        free(o->job);
        if (o->has_result) o->free_result(o->result);
        dp_loop_source_free(o->io);
        if (o->efd >= 0) close(o->efd);
        pthread_cond_destroy(&o->cond);
        pthread_mutex_destroy(&o->lock);
        free(o);
        return NULL;
}

int dp_kube_offload_submit(dp_kube_offload *o, const char *data, size_t len, uint64_t tag) {
        assert_return(o && (data || !len), -EINVAL);
        char *copy = malloc(len + 1);
        if (!copy) return -ENOMEM;
        memcpy(copy, data, len);
        copy[len] = 0;
        if (!o->started) {
                /* the worker takes no signals: the loop's signalfd does */
                sigset_t all, old;
                sigfillset(&all);
                pthread_sigmask(SIG_SETMASK, &all, &old);
                int r = pthread_create(&o->thread, NULL, worker, o);
                pthread_sigmask(SIG_SETMASK, &old, NULL);
                if (r != 0) {
                        free(copy);
                        return -EAGAIN;
                }
                o->started = true;
        }
        pthread_mutex_lock(&o->lock);
        free(o->job);
        o->job = copy;
        o->job_len = len;
        o->job_tag = tag;
        pthread_cond_signal(&o->cond);
        pthread_mutex_unlock(&o->lock);
        return 0;
}
