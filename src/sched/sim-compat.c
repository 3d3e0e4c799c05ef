/* SPDX-License-Identifier: Apache-2.0
 * sim-compat.c — a node group's DRA driver publishing compatibility-group
 * partitions (Fleet nodeGroups[].dra.compatGroups, Kubernetes 1.37): the
 * inventory's compat_groups option (dra/inventory.h) over the node's own copy
 * of its hardware profile. Per GPU, counter set gpu-<i>-memory; MIG-mode
 * devices (the GPU's MIG instances, else gpu-<i>-mig-<j>) in group [mig];
 * gpu-<i>-vgpu-<j> and the whole gpu-<i> in group [vgpu].
 *
 * The devnode (sched/devnode.h) keeps the V1 view and the ledger; its DRA
 * options carry partitions and allowMultipleAllocations only, so the node
 * keeps this second inventory beside it, rebuilt on every health change as
 * the devnode's is. Each device also gets attribute `mode` (mig, vgpu or
 * whole), as profiles with partition modes publish, so DeviceClasses can
 * select a mode. */
#include "sched/sim-internal.h"

static int add_mode_attr(dp_dra_device *d) {
        for (size_t i = 0; i < d->n_attrs; i++)
                if (streq_ptr(d->attrs[i].name, "mode")) return 0;
        const char *mode = NULL;
        for (size_t c = 0; c < d->n_consumes && !mode; c++)
                for (size_t g = 0; g < d->consumes[c].n_groups && !mode; g++)
                        mode = d->consumes[c].groups[g];
        if (!mode) return 0;
        if (d->kind == DP_DRA_KIND_FULL) mode = "whole";
        dp_dra_attr *v = realloc(d->attrs, (d->n_attrs + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        d->attrs = v;
        v[d->n_attrs] = (dp_dra_attr){.type = DP_DRA_VAL_STRING};
        if (!(v[d->n_attrs].name = dp_strdup("mode")) || !(v[d->n_attrs].s = dp_strdup(mode))) {
                free(v[d->n_attrs].name);
                free(v[d->n_attrs].s);
                return -ENOMEM;
        }
        d->n_attrs++;
        return 0;
}

int sim_compat_rebuild(sim_node *sn, dp_error *err) {
        if (!sn->compat_set) return 0;
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.compat_groups = true;
        o.partitions = sn->group->dra_partitions;
        o.allow_multiple = sn->group->dra_allow_multiple;
        _cleanup_(dp_dra_inventory_freep) dp_dra_inventory *inv = NULL;
        int r = dp_dra_inventory_build(sn->compat_set, &o, &inv, err);
        if (r < 0) return r;
        for (size_t i = 0; i < inv->n_devices; i++)
                if ((r = add_mode_attr(&inv->devices[i])) < 0) return r;
        dp_dra_inventory_free(sn->compat_inv);
        sn->compat_inv = TAKE_PTR(inv);
        return 0;
}

int sim_compat_init(sim_node *sn, dp_error *err) {
        if (!sn->group->dra_compat_groups) return 0;
        const dp_sim_group *g = sn->group;
        int r = dp_devnode_profile_load(g->profile_text ? g->profile_path : g->profile, g->profile_text, g->profile_len,
                                        sn->name, &sn->compat_set, err);
        if (r < 0) return r;
        return sim_compat_rebuild(sn, err);
}

void sim_compat_done(sim_node *sn) {
        sn->compat_inv = dp_dra_inventory_free(sn->compat_inv);
        sn->compat_set = dp_dra_device_set_free(sn->compat_set);
}

int sim_compat_set_health(sim_node *sn, const char *id, bool healthy, dp_error *err) {
        if (!sn->compat_set) return 0;
        dp_error e = DP_ERROR_INIT;
        int r = dp_dra_device_set_health(sn->compat_set, id, healthy, &e);
        if (r == -ENOENT) { /* named by uuid: the devnode knows it */
                for (size_t u = 0; u < dp_devnode_unit_count(sn->dev) && r == -ENOENT; u++) {
                        dp_devnode_unit du;
                        if (dp_devnode_unit_get(sn->dev, u, &du) >= 0 && streq_ptr(du.uuid, id))
                                r = dp_dra_device_set_health(sn->compat_set, du.id, healthy, &e);
                }
        }
        if (r < 0) return dp_error_set(err, r, "%s", dp_error_msg(&e));
        return sim_compat_rebuild(sn, err);
}

const dp_dra_inventory *sim_node_inventory(const sim_node *sn) {
        return sn->compat_inv ? sn->compat_inv : dp_devnode_inventory(sn->dev);
}

int sim_node_unit_of_v2(const sim_node *sn, const char *device_name) {
        if (!sn->compat_inv) return dp_devnode_unit_of_v2(sn->dev, device_name);
        const dp_dra_device *d = dp_dra_inventory_find(sn->compat_inv, device_name);
        if (!d || !d->model_id) return -ENOENT;
        /* MIG instances are units of their own; partitions live on their GPU
         * (model_id names the GPU) */
        return dp_devnode_unit_find(sn->dev, d->model_id);
}
