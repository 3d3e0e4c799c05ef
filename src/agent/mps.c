/* SPDX-License-Identifier: Apache-2.0
 * mps.c — MPS sharing as NVIDIA's plugin does it: one MPS control daemon per
 * shared resource, started through `nvidia-cuda-mps-control` (on PATH, or
 * $DP_MPS_CONTROL), with the per-GPU pinned-memory limit (memory ÷ replicas)
 * and the active-thread percentage (100 ÷ replicas) set through its control
 * pipe; a resource is ready (and advertised) once the daemon answers.
 *
 * Layout under flags.mpsRoot (NVIDIA's): <root>/<resource>/pipe and /log,
 * <root>/<resource>/.started once ready, <root>/shm shared. The control
 * program returns at once (-d daemonizes; commands are one line on stdin),
 * so these calls are short and made from the loop's thread at start,
 * reload and stop, as NVIDIA's daemon makes them. */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent-internal.h"
#include "base/fileio.h"
#include "base/log.h"

extern char **environ;

static const char *control_program(void) {
        const char *p = getenv("DP_MPS_CONTROL");
        return p && *p ? p : "nvidia-cuda-mps-control";
}

/* Run the control program with the resource's pipe and log directories in
 * its environment; `input` (may be NULL) is written to its stdin, its stdout
 * is read into `out` (may be NULL). Returns its exit status or -errno. */
static int control(const char *pipe_dir, const char *log_dir, const char *arg, const char *input, char *out,
                   size_t out_size) {
        size_t n = 0;
        while (environ[n])
                n++;
        _cleanup_free_ char **envp = calloc(n + 3, sizeof(char *));
        _cleanup_free_ char *e1 = dp_asprintf("CUDA_MPS_PIPE_DIRECTORY=%s", pipe_dir);
        _cleanup_free_ char *e2 = dp_asprintf("CUDA_MPS_LOG_DIRECTORY=%s", log_dir);
        if (!envp || !e1 || !e2) return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                if (!startswith(environ[i], "CUDA_MPS_PIPE_DIRECTORY=") &&
                    !startswith(environ[i], "CUDA_MPS_LOG_DIRECTORY="))
                        envp[k++] = environ[i];
        envp[k++] = e1;
        envp[k++] = e2;
        int in[2] = {-1, -1}, outp[2] = {-1, -1};
        /* stdin is a socket so the write can say MSG_NOSIGNAL: a control
         * program that exits without reading costs EPIPE, not SIGPIPE. */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0) return -errno;
        if (pipe2(outp, O_CLOEXEC) < 0) {
                int r = -errno;
                close(in[0]);
                close(in[1]);
                return r;
        }
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
        posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
        char *argv[] = {(char *)control_program(), (char *)arg, NULL};
        pid_t pid;
        int r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        close(in[0]);
        close(outp[1]);
        if (r != 0) {
                close(in[1]);
                close(outp[0]);
                return -r;
        }
        if (input) (void)!send(in[1], input, strlen(input), MSG_NOSIGNAL);
        close(in[1]);
        size_t got = 0;
        char buf[512];
        ssize_t m;
        while ((m = read(outp[0], buf, sizeof buf)) > 0 || (m < 0 && errno == EINTR))
                if (m > 0 && out && got + 1 < out_size) {
                        size_t c = DP_MIN((size_t)m, out_size - 1 - got);
                        memcpy(out + got, buf, c);
                        got += c;
                }
        if (out && out_size) out[got] = 0;
        close(outp[0]);
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR) return -errno;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int send_command(const agent_mps_daemon *d, const char *cmd, char *out, size_t out_size, dp_error *err) {
        _cleanup_free_ char *line = dp_asprintf("%s\n", cmd);
        if (!line) return -ENOMEM;
        int r = control(d->pipe_dir, d->log_dir, NULL, line, out, out_size);
        if (r != 0)
                return dp_error_set(err, r < 0 ? r : -EIO, "MPS control daemon of %s: \"%s\": %s", d->resource, cmd,
                                    r < 0 ? strerror(-r) : "the control program failed");
        return 0;
}

agent_mps *agent_mps_free(agent_mps *m) {
        if (!m) return NULL;
        for (size_t i = 0; i < m->n; i++) {
                agent_mps_daemon *d = &m->daemons[i];
                if (d->started) {
                        dp_error e = DP_ERROR_INIT;
                        if (send_command(d, "quit", NULL, 0, &e) < 0) log_warning("%s", dp_error_msg(&e));
                        _cleanup_free_ char *started = dp_asprintf("%s/.started", d->dir);
                        if (started) (void)unlink(started);
                        log_info("MPS control daemon of %s stopped", d->resource);
                }
                dp_free_many(d->resource, d->dir, d->pipe_dir, d->log_dir);
        }
        free(m->daemons);
        free(m);
        return NULL;
}

static int start_one(agent_mps_daemon *d, const char *root, const dp_v1_resource *res, const dp_device_set *set,
                     dp_error *err) {
        d->replicas = res->replicas;
        if (!(d->resource = strdup(res->name)) || !(d->dir = dp_asprintf("%s/%s", root, res->name)) ||
            !(d->pipe_dir = dp_asprintf("%s/pipe", d->dir)) || !(d->log_dir = dp_asprintf("%s/log", d->dir)))
                return -ENOMEM;
        _cleanup_free_ char *shm = dp_asprintf("%s/shm", root);
        if (!shm) return -ENOMEM;
        int r;
        if ((r = dp_mkdir_p(d->pipe_dir, 0755)) < 0 || (r = dp_mkdir_p(d->log_dir, 0755)) < 0 ||
            (r = dp_mkdir_p(shm, 0755)) < 0)
                return dp_error_errno(err, r, "MPS directories under %s", d->dir);
        r = control(d->pipe_dir, d->log_dir, "-d", NULL, NULL, 0);
        if (r != 0)
                return dp_error_set(err, r < 0 ? r : -EIO, "%s -d (MPS control daemon of %s): %s", control_program(),
                                    res->name, r < 0 ? strerror(-r) : "exited with an error");
        d->started = true;
        /* Per physical GPU: its memory shared evenly by its replicas. */
        for (size_t i = 0; i < res->n_devices; i++) {
                const dp_v1_device *v = &res->devices[i];
                if (v->replica != 0 || v->gpu >= set->n_devices) continue;
                const dp_hw_device *dev = &set->devices[v->gpu];
                if (!dev->memory_bytes) continue;
                char cmd[128];
                snprintf(cmd, sizeof cmd, "set_default_device_pinned_mem_limit %u %lluM", dev->index,
                         (unsigned long long)(dev->memory_bytes / res->replicas / 1024 / 1024));
                if ((r = send_command(d, cmd, NULL, 0, err)) < 0) return r;
        }
        char cmd[64];
        snprintf(cmd, sizeof cmd, "set_default_active_thread_percentage %u", 100 / res->replicas);
        if ((r = send_command(d, cmd, NULL, 0, err)) < 0) return r;
        /* Ready when the daemon answers (NVIDIA's health check). */
        char out[64];
        if ((r = send_command(d, "get_default_active_thread_percentage", out, sizeof out, err)) < 0) return r;
        if ((r = dp_write_file_atomic(d->dir, ".started", "", 0, 0644, 0, err)) < 0) return r;
        log_info("MPS control daemon of %s ready (%u replicas per GPU, active threads %u%%)", res->name, res->replicas,
                 100 / res->replicas);
        return 0;
}

int agent_mps_start(const dp_agent_config *c, const dp_v1_plan *plan, const dp_device_set *set, agent_mps **ret,
                    dp_error *err) {
        *ret = NULL;
        if (!c->mps) return 0;
        _cleanup_(agent_mps_freep) agent_mps *m = calloc(1, sizeof *m);
        if (!m || !(m->daemons = calloc(plan->n_resources + 1, sizeof *m->daemons))) return -ENOMEM;
        for (size_t i = 0; i < plan->n_resources; i++) {
                if (plan->resources[i].replicas < 2) continue;
                int r = start_one(&m->daemons[m->n++], c->mps_root, &plan->resources[i], set, err);
                if (r < 0) return r;
        }
        *ret = TAKE_PTR(m);
        return 0;
}

bool agent_mps_same(const agent_mps *m, const dp_agent_config *c, const dp_v1_plan *plan) {
        size_t n = 0;
        if (!m || !c->mps) return !m && !c->mps;
        for (size_t i = 0; i < plan->n_resources; i++) {
                const dp_v1_resource *r = &plan->resources[i];
                if (r->replicas < 2) continue;
                if (n >= m->n || !streq(m->daemons[n].resource, r->name) || m->daemons[n].replicas != r->replicas ||
                    !startswith(m->daemons[n].dir, c->mps_root))
                        return false;
                n++;
        }
        return n == m->n;
}
