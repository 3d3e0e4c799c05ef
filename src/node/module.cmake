# SPDX-License-Identifier: Apache-2.0
# The node's DRA manager (dra-manager.c) reads claims and pods through the
# model and uses the driver core's skipNodeOperations rule and file helpers.
target_link_libraries(dp_node PUBLIC dp_dra dp_model)
