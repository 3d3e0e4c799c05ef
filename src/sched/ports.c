/* SPDX-License-Identifier: Apache-2.0
 * ports.c — NodePorts: the host ports a pod asks for and whether a node's
 * ports in use leave them free, by kube-scheduler's rules (HostPortInfo:
 * an unset hostIP is 0.0.0.0 and an unset protocol TCP; 0.0.0.0 conflicts
 * with the same protocol and port on any address, another address with
 * itself and 0.0.0.0). Regular containers' and sidecars' ports count, not
 * other init containers', as kube-scheduler 1.35 counts them. */
#include <stdio.h>

#include "sched/fmt.h"
#include "sched/sched-internal.h"

#define ALL_IPS "0.0.0.0"

/* The containers whose ports count: regular ones and sidecars (init
 * containers with restartPolicy Always), as kube-scheduler 1.35 counts them. */
static bool ports_count(const dp_container *c, bool init) {
        return !init || (c->restart_policy && streq(c->restart_policy, "Always"));
}

int dp_pod_host_ports(const dp_pod *p, dp_host_port **ret, size_t *ret_n) {
        size_t n = 0;
        for (int pass = 0; pass < 2; pass++) {
                const dp_container *v = pass ? p->init_containers : p->containers;
                size_t nv = pass ? p->n_init_containers : p->n_containers;
                for (size_t c = 0; c < nv; c++)
                        if (ports_count(&v[c], pass)) n += v[c].n_host_ports;
        }
        *ret = NULL;
        *ret_n = 0;
        if (!n) return 0;
        dp_host_port *out = calloc(n, sizeof(*out));
        if (!out) return -ENOMEM;
        size_t k = 0;
        for (int pass = 0; pass < 2; pass++) {
                const dp_container *v = pass ? p->init_containers : p->containers;
                size_t nv = pass ? p->n_init_containers : p->n_containers;
                for (size_t c = 0; c < nv; c++)
                        for (size_t i = 0; ports_count(&v[c], pass) && i < v[c].n_host_ports; i++) {
                                const dp_container_port *cp = &v[c].host_ports[i];
                                dp_host_port *hp = &out[k++];
                                dp_fmt(hp->proto, sizeof(hp->proto), "%s", cp->protocol ? cp->protocol : "TCP");
                                dp_fmt(hp->ip, sizeof(hp->ip), "%s",
                                       cp->host_ip && cp->host_ip[0] ? cp->host_ip : ALL_IPS);
                                hp->port = cp->host_port;
                        }
        }
        *ret = out;
        *ret_n = k;
        return 0;
}

void dp_host_port_key(const dp_host_port *hp, char *buf, size_t size) {
        dp_fmt(buf, size, "%s/%s/%d", hp->proto, hp->ip, (int)hp->port);
}

bool dp_host_ports_conflict(const dp_host_port *want, const dp_host_port *used) {
        if (want->port != used->port || !streq(want->proto, used->proto)) return false;
        return streq(want->ip, ALL_IPS) || streq(used->ip, ALL_IPS) || streq(want->ip, used->ip);
}
