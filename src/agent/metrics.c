/* SPDX-License-Identifier: Apache-2.0
 * The agent's metrics listener (see metrics.h). */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

#include "agent/metrics.h"
#include "base/log.h"

const double agent_histogram_bounds[AGENT_HISTOGRAM_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025,
                                                                0.05,  0.1,    0.5,   1,    10};

void agent_histogram_observe(agent_histogram *h, double seconds) {
        for (size_t i = 0; i < AGENT_HISTOGRAM_BUCKETS; i++)
                if (seconds <= agent_histogram_bounds[i]) h->le[i]++;
        h->count++;
        h->sum += seconds;
}

void agent_histogram_write(dp_strbuf *out, const char *name, const char *help, const agent_histogram *h) {
        dp_strbuf_printf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
        for (size_t i = 0; i < AGENT_HISTOGRAM_BUCKETS; i++)
                dp_strbuf_printf(out, "%s_bucket{le=\"%g\"} %llu\n", name, agent_histogram_bounds[i],
                                 (unsigned long long)h->le[i]);
        dp_strbuf_printf(out, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.9g\n%s_count %llu\n", name,
                         (unsigned long long)h->count, name, h->sum, name, (unsigned long long)h->count);
}

typedef struct metrics_client metrics_client;

struct agent_metrics_server {
        dp_loop *loop;
        int fd, port;
        dp_loop_source *listen_src;
        agent_metrics_render_fn render;
        void *userdata;
        metrics_client *clients;
        size_t n_clients;
};

struct metrics_client {
        agent_metrics_server *srv;
        metrics_client *next;
        int fd;
        dp_loop_source *io, *timer;
        dp_strbuf in, out;
        size_t sent;
};

static void client_free(metrics_client *c) {
        agent_metrics_server *s = c->srv;
        for (metrics_client **p = &s->clients; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        s->n_clients--;
        dp_loop_source_free(c->io);
        dp_loop_source_free(c->timer);
        close(c->fd);
        dp_strbuf_done(&c->in);
        dp_strbuf_done(&c->out);
        free(c);
}

static void respond(metrics_client *c) {
        const char *req = dp_strbuf_str(&c->in);
        dp_strbuf body = DP_STRBUF_INIT;
        const char *status = "200 OK", *type = "text/plain; version=0.0.4; charset=utf-8";
        bool head = startswith(req, "HEAD ");
        if (!startswith(req, "GET ") && !head) {
                status = "405 Method Not Allowed";
                type = "text/plain";
                dp_strbuf_puts(&body, "only GET\n");
        } else if (startswith(req + (head ? 5 : 4), "/healthz ")) {
                /* Liveness and startup probes: the loop answers, so the agent lives. */
                type = "text/plain";
                dp_strbuf_puts(&body, "ok\n");
        } else if (!startswith(req + (head ? 5 : 4), "/metrics ") && !startswith(req + (head ? 5 : 4), "/metrics?")) {
                status = "404 Not Found";
                type = "text/plain";
                dp_strbuf_puts(&body, "metrics are at /metrics, health at /healthz\n");
        } else {
                c->srv->render(&body, c->srv->userdata);
        }
        dp_strbuf_printf(&c->out, "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                         status, type, body.len);
        if (!head) dp_strbuf_append(&c->out, dp_strbuf_str(&body), body.len);
        dp_strbuf_done(&body);
        (void)dp_loop_source_set_events(c->io, EPOLLOUT);
}

static int on_client_io(dp_loop_source *src, int fd, uint32_t events, void *ud) {
        metrics_client *c = ud;
        if (c->out.len) {
                if (dp_strbuf_failed(&c->out)) {
                        client_free(c);
                        return 0;
                }
                ssize_t k = send(fd, c->out.buf + c->sent, c->out.len - c->sent, MSG_NOSIGNAL);
                if (k < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
                if (k <= 0 || (c->sent += (size_t)k) == c->out.len) client_free(c);
                return 0;
        }
        char buf[2048];
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
        if (k <= 0 || c->in.len + (size_t)k > AGENT_METRICS_MAX_REQUEST) {
                client_free(c);
                return 0;
        }
        dp_strbuf_append(&c->in, buf, (size_t)k);
        if (dp_strbuf_failed(&c->in)) {
                client_free(c);
                return 0;
        }
        if (strstr(dp_strbuf_str(&c->in), "\r\n\r\n") || strstr(dp_strbuf_str(&c->in), "\n\n")) respond(c);
        return 0;
}

static int on_client_timeout(dp_loop_source *src, uint64_t now, void *ud) {
        client_free(ud);
        return 0;
}

static int on_accept(dp_loop_source *src, int fd, uint32_t events, void *ud) {
        agent_metrics_server *s = ud;
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) return 0;
        if (s->n_clients >= AGENT_METRICS_MAX_CLIENTS) {
                close(cfd);
                return 0;
        }
        metrics_client *c = calloc(1, sizeof *c);
        if (!c) {
                close(cfd);
                return 0;
        }
        c->srv = s;
        c->fd = cfd;
        c->next = s->clients;
        s->clients = c;
        s->n_clients++;
        if (dp_loop_add_io(s->loop, cfd, EPOLLIN, on_client_io, c, &c->io) < 0 ||
            dp_loop_add_timer(s->loop, dp_loop_now() + AGENT_METRICS_TIMEOUT_USEC, on_client_timeout, c, &c->timer) < 0)
                client_free(c);
        return 0;
}

int agent_metrics_server_new(dp_loop *l, const char *addr, agent_metrics_render_fn render, void *userdata,
                             agent_metrics_server **ret, dp_error *err) {
        assert_return(l && addr && render && ret, -EINVAL);
        const char *colon = strrchr(addr, ':');
        if (!colon || !colon[1])
                return dp_error_set(err, -EINVAL, "--metrics-addr %s: expected HOST:PORT (or :PORT)", addr);
        _cleanup_free_ char *host = strndup(addr, (size_t)(colon - addr));
        if (!host) return -ENOMEM;
        if (host[0] == '[' && host[strlen(host) - 1] == ']') {
                memmove(host, host + 1, strlen(host));
                host[strlen(host) - 1] = 0;
        }
        struct addrinfo hints = {.ai_family = AF_UNSPEC,
                                 .ai_socktype = SOCK_STREAM,
                                 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
                        *ai = NULL;
        int g = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
        if (g != 0) return dp_error_set(err, -EINVAL, "--metrics-addr %s: %s", addr, gai_strerror(g));
        _cleanup_close_ int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int one = 1, r = 0;
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
            bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 16) < 0)
                r = -errno;
        freeaddrinfo(ai);
        if (r < 0) return dp_error_errno(err, r, "metrics listener %s", addr);
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) return dp_error_errno(err, -errno, "getsockname");
        agent_metrics_server *s = calloc(1, sizeof *s);
        if (!s) return -ENOMEM;
        s->loop = l;
        s->render = render;
        s->userdata = userdata;
        s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
        if ((r = dp_loop_add_io(l, fd, EPOLLIN, on_accept, s, &s->listen_src)) < 0) {
                free(s);
                return dp_error_errno(err, r, "metrics listener");
        }
        s->fd = TAKE_FD(fd);
        *ret = s;
        return 0;
}

agent_metrics_server *agent_metrics_server_free(agent_metrics_server *s) {
        if (!s) return NULL;
        while (s->clients)
                client_free(s->clients);
        dp_loop_source_free(s->listen_src);
        close(s->fd);
        free(s);
        return NULL;
}

int agent_metrics_server_port(const agent_metrics_server *s) { return s ? s->port : 0; }
