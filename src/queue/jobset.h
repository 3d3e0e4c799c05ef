/* SPDX-License-Identifier: Apache-2.0
 *
 * jobset.h — JobSet (jobset.x-k8s.io/v1alpha2) as the queue reads it: each
 * replicatedJob's Job template (decoded as a batch/v1 Job, so its pod
 * template is checked as any Job's) and its replicas. Decoded through the
 * model's extension table (dp_jobset_model_ext, chained after Kueue's
 * kinds); the JobSet stays in the object list, and dp_queue_apply_owners
 * stands its Jobs up as the JobSet controller names them
 * (<jobset>-<replicatedJob>-<index>), their pods labelled as it labels them.
 * A field JobSet defines and devplane does not read is a warning naming it.
 */
#pragma once

#include "model/model.h"

#define DP_JOBSET_NAME_LABEL "jobset.sigs.k8s.io/jobset-name"
#define DP_JOBSET_RJOB_LABEL "jobset.sigs.k8s.io/replicatedjob-name"
#define DP_JOBSET_RJOB_REPLICAS_LABEL "jobset.sigs.k8s.io/replicatedjob-replicas"
#define DP_JOBSET_JOB_INDEX_LABEL "jobset.sigs.k8s.io/job-index"

/* devplane's caps (JobSet sets none): replicatedJobs per JobSet (Kueue's
 * pod sets per workload), Jobs per JobSet (the replicas of all its
 * replicatedJobs together). */
#define DP_JOBSET_MAX_REPLICATED_JOBS 8
#define DP_JOBSET_MAX_REPLICAS 10000

typedef struct dp_jobset_rjob {
        char *name;
        int32_t replicas;   /* default 1 */
        dp_deployment *job; /* template as a Job (hdr.kind DP_KIND_JOB; no name) */
        char *spec_json;    /* template.spec (the JobSpec) as compact JSON, to stand the Jobs up */
} dp_jobset_rjob;

typedef struct dp_jobset {
        dp_ext_object x;
        bool suspend; /* spec.suspend */
        dp_jobset_rjob *rjobs;
        size_t n_rjobs;
} dp_jobset;

extern const dp_model_ext dp_jobset_model_ext;

/* Is o a JobSet (decoded through dp_jobset_model_ext)? */
bool dp_is_jobset(dp_object o);
