/* SPDX-License-Identifier: Apache-2.0
 *
 * integrations.h — Kueue's job integrations beyond batch/v1 Job and plain
 * Pods: the Kubeflow training jobs (PyTorchJob, TFJob, XGBoostJob,
 * PaddleJob, JAXJob: kubeflow.org/v1; MPIJob: kubeflow.org/v2beta1), KubeRay
 * (RayJob, RayCluster, RayService: ray.io/v1), SparkApplication
 * (sparkoperator.k8s.io/v1beta2), AppWrapper (workload.codeflare.dev/v1beta2),
 * LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), CronJob (batch/v1) and the
 * agent Sandbox (agents.x-k8s.io/v1alpha1, a pod for the pod integration), plus
 * the apps/v1 Deployment and StatefulSet the model already decodes.
 *
 * The foreign kinds are decoded through their own extension table
 * (dp_queue_integrations_ext, chained behind dp_queue_model_ext): a field
 * Kueue reads is checked (one error with the path, exit 2), any other field
 * of these other projects' objects is taken silently. Each object keeps its
 * pod sets as Kueue's integration builds them (name, count, template, order)
 * and how its operator names the pods.
 *
 * Ownership as in model/objects.h: strings and arrays belong to the struct.
 */
#pragma once

#include "model/model.h"

/* One pod set: Kueue's name, its count, the template (as a Pod and as JSON
 * for standing pods up), and the operator's pod names: prefix + (first + i),
 * or the prefix alone when `single`. */
typedef struct dp_qj_podset {
        char *name;
        int32_t count;
        int32_t first;
        bool single;
        char *pod_prefix;
        dp_pod *tmpl;
        char *tmpl_json;
} dp_qj_podset;

/* Kueue allows 8 pod sets a workload (the Workload's maxItems). */
#define DP_QJ_MAX_PODSETS 8

typedef struct dp_qj_job {
        dp_ext_object x;
        dp_qj_podset *ps;
        size_t n_ps;
        char *priority_class; /* runPolicy.schedulingPolicy.priorityClass (Kubeflow, MPI) */
        int32_t groups;       /* LeaderWorkerSet: one workload per group (spec.replicas) */
        bool pod_based;       /* LeaderWorkerSet: pods stand up gated while pending */
        bool cron;            /* CronJob: nothing at t=0 */
        bool plain_pod;       /* Sandbox: its one pod is a plain Pod to Kueue (the pod integration) */
} dp_qj_job;

extern const dp_model_ext dp_queue_integrations_ext;

/* The integration object o is (NULL for anything else). */
const dp_qj_job *dp_qj_job_of(dp_object o);
