/* SPDX-License-Identifier: Apache-2.0
 * ports.c — NodePorts: the host ports a pod asks for and whether a node's
 * ports in use leave them free, by kube-scheduler's rules (HostPortInfo:
 * an unset hostIP is 0.0.0.0 and an unset protocol TCP; 0.0.0.0 conflicts
 * with the same protocol and port on any address, another address with
 * itself and 0.0.0.0). Only regular containers' ports count, as
 * kube-scheduler 1.35 counts them. */
#include <stdio.h>

#include "sched/fmt.h"
#include "sched/sched-internal.h"

#define ALL_IPS "0.0.0.0"

int dp_pod_host_ports(const dp_pod *p, dp_host_port **ret, size_t *ret_n) {
        size_t n = 0;
        for (size_t c = 0; c < p->n_containers; c++)
                n += p->containers[c].n_host_ports;
        *ret = NULL;
        *ret_n = 0;
        if (!n) return 0;
        dp_host_port *v = calloc(n, sizeof(*v));
        if (!v) return -ENOMEM;
        size_t k = 0;
        for (size_t c = 0; c < p->n_containers; c++)
                for (size_t i = 0; i < p->containers[c].n_host_ports; i++) {
                        const dp_container_port *cp = &p->containers[c].host_ports[i];
                        dp_host_port *hp = &v[k++];
                        dp_fmt(hp->proto, sizeof(hp->proto), "%s", cp->protocol ? cp->protocol : "TCP");
                        dp_fmt(hp->ip, sizeof(hp->ip), "%s", cp->host_ip && cp->host_ip[0] ? cp->host_ip : ALL_IPS);
                        hp->port = cp->host_port;
                }
        *ret = v;
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
