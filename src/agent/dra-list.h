/* SPDX-License-Identifier: Apache-2.0
 *
 * dra-list.h — devplane's PreparedClaims List call on the DRA driver's
 * socket (proto/devplane-dra/v1/api.proto): the claims of the driver
 * checkpoint, so a `devplane node` that lost its DRA state can learn what
 * the driver holds and unprepare what no pod needs. Kept apart from dra.c,
 * which only registers it.
 */
#pragma once

#include "dra/prepared.h"
#include "grpc/grpc.h"

#define AGENT_DRA_LIST_PATH "/devplane.dra.v1.PreparedClaims/List"

/* Register List on srv. *ckpt is read at each call (the address of the
 * driver's checkpoint pointer, which outlives srv); a NULL checkpoint is
 * answered UNAVAILABLE. 0 or a negative errno. */
int agent_dra_list_serve(dp_grpc_server *srv, dp_dra_checkpoint *const *ckpt);
/* The List answer for a checkpoint, packed into *ret (free()). 0, -ENOMEM,
 * -E2BIG (over the gRPC message cap). */
int agent_dra_list_reply(const dp_dra_checkpoint *c, uint8_t **ret, size_t *ret_len);
