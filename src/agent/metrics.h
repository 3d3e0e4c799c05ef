/* SPDX-License-Identifier: Apache-2.0
 *
 * metrics.h — the agent's Prometheus metrics: counters and histograms the
 * agent updates on its loop, and an opt-in HTTP listener (--metrics-addr
 * HOST:PORT) that answers GET /metrics in the text exposition format
 * (version 0.0.4). The listener is a few lines of HTTP/1.0 on the same
 * loop: one request per connection, answered and closed; a client that
 * sends more than AGENT_METRICS_MAX_REQUEST bytes of headers or stays
 * silent past AGENT_METRICS_TIMEOUT_USEC is dropped.
 */
#pragma once

#include "base/error.h"
#include "base/strbuf.h"
#include "grpc/loop.h"

#define AGENT_METRICS_MAX_REQUEST 8192
#define AGENT_METRICS_MAX_CLIENTS 16
#define AGENT_METRICS_TIMEOUT_USEC (5ull * 1000 * 1000)
#define AGENT_HISTOGRAM_BUCKETS 10

typedef struct agent_histogram {
        uint64_t le[AGENT_HISTOGRAM_BUCKETS]; /* cumulative counts per bound */
        uint64_t count;
        double sum;
} agent_histogram;

/* Bounds in seconds: 1 ms .. 10 s. */
extern const double agent_histogram_bounds[AGENT_HISTOGRAM_BUCKETS];
void agent_histogram_observe(agent_histogram *h, double seconds);
/* Write NAME_bucket/_sum/_count lines (HELP and TYPE included). */
void agent_histogram_write(dp_strbuf *out, const char *name, const char *help, const agent_histogram *h);

typedef struct agent_metrics {
        agent_histogram prepare, unprepare; /* per NodePrepare/UnprepareResources call */
        uint64_t prepare_calls, unprepare_calls;
        uint64_t claim_errors;   /* claims answered with an error */
        uint64_t v1_allocations; /* container requests answered by Allocate */
} agent_metrics;

/* Render the page into out (called per scrape). */
typedef void (*agent_metrics_render_fn)(dp_strbuf *out, void *userdata);

typedef struct agent_metrics_server agent_metrics_server;

/* addr: "HOST:PORT" or ":PORT" (all addresses), "[v6]:PORT". -EINVAL
 * (err) for a bad address, -errno from bind/listen (err names it). */
int agent_metrics_server_new(dp_loop *l, const char *addr, agent_metrics_render_fn render, void *userdata,
                             agent_metrics_server **ret, dp_error *err);
agent_metrics_server *agent_metrics_server_free(agent_metrics_server *s);
DEFINE_FREEP(agent_metrics_server, agent_metrics_server_free)
/* The port actually bound (":0" picks one). */
int agent_metrics_server_port(const agent_metrics_server *s);
