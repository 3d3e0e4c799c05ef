/* SPDX-License-Identifier: Apache-2.0
 *
 * validate.h — the Kubernetes limits devplane enforces on objects, each named
 * after the constant it mirrors (k8s.io/api/resource/v1 types.go and
 * apimachinery validation; values as of 1.35-1.37, see
 * shared/reference/dra-semantics.md §1c). Exceeding one is -E2BIG.
 */
#pragma once

/* apimachinery validation */
#define DP_DNS1123_LABEL_MAX_LENGTH 63      /* validation.DNS1123LabelMaxLength */
#define DP_DNS1123_SUBDOMAIN_MAX_LENGTH 253 /* validation.DNS1123SubdomainMaxLength */
#define DP_QUALIFIED_NAME_MAX_LENGTH 63     /* validation.qualifiedNameMaxLength */
#define DP_LABEL_VALUE_MAX_LENGTH 63        /* validation.LabelValueMaxLength */

/* ResourceSlice */
#define DP_RESOURCE_SLICE_MAX_DEVICES 128 /* ResourceSliceMaxDevices */
/* ResourceSliceMaxDevicesWithTaintsOrConsumesCounters (1.35+) */
#define DP_RESOURCE_SLICE_MAX_DEVICES_WITH_TAINTS_OR_CONSUMES_COUNTERS 64
#define DP_RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE                                                     \
        32 /* ResourceSliceMaxAttributesAndCapacitiesPerDevice */
#define DP_RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE                                                              \
        48                                                /* list-type attributes (1.36), values incl. list elements */
#define DP_DEVICE_MAX_DOMAIN_LENGTH 63                    /* DeviceMaxDomainLength */
#define DP_DEVICE_MAX_ID_LENGTH 32                        /* DeviceMaxIDLength */
#define DP_DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH 64           /* DeviceAttributeMaxValueLength */
#define DP_DRIVER_NAME_MAX_LENGTH 63                      /* DriverNameMaxLength */
#define DP_POOL_NAME_MAX_LENGTH 253                       /* PoolNameMaxLength */
#define DP_DEVICE_TAINTS_MAX_LENGTH 16                    /* DeviceTaintsMaxLength (4 before 1.35) */
#define DP_RESOURCE_SLICE_MAX_COUNTER_SETS 8              /* ResourceSliceMaxCounterSets (1.35+) */
#define DP_RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET 32 /* ResourceSliceMaxCountersPerCounterSet */
/* ResourceSliceMaxDeviceCounterConsumptionsPerDevice */
#define DP_RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE 2
/* ResourceSliceMaxCountersPerDeviceCounterConsumption */
#define DP_RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION 32
#define DP_DEVICE_COMPATIBILITY_GROUPS_MAX_SIZE 2          /* compatibilityGroups per consumption (KEP-5963, 1.37) */
#define DP_BINDING_CONDITIONS_MAX_SIZE 4                   /* BindingConditionsMaxSize */
#define DP_BINDING_FAILURE_CONDITIONS_MAX_SIZE 4           /* BindingFailureConditionsMaxSize */
#define DP_CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS 10 /* CapacityRequestPolicyDiscreteMaxOptions */

/* ResourceClaim / DeviceClass */
#define DP_DEVICE_REQUESTS_MAX_SIZE 32                         /* DeviceRequestsMaxSize */
#define DP_DEVICE_CONSTRAINTS_MAX_SIZE 32                      /* DeviceConstraintsMaxSize */
#define DP_DEVICE_CONFIG_MAX_SIZE 32                           /* DeviceConfigMaxSize */
#define DP_DEVICE_SELECTORS_MAX_SIZE 32                        /* DeviceSelectorsMaxSize */
#define DP_FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE 8           /* FirstAvailableDeviceRequestMaxSize */
#define DP_DEVICE_TOLERATIONS_MAX_LENGTH 16                    /* DeviceTolerationsMaxLength */
#define DP_ALLOCATION_RESULTS_MAX_SIZE 32                      /* AllocationResultsMaxSize */
#define DP_CEL_SELECTOR_EXPRESSION_MAX_LENGTH (10 * 1024)      /* CELSelectorExpressionMaxLength */
#define DP_OPAQUE_PARAMETERS_MAX_LENGTH (10 * 1024)            /* OpaqueParametersMaxLength */
#define DP_RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE 256            /* ResourceClaimReservedForMaxSize */
#define DP_ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS 8            /* AllocatedDeviceStatusMaxConditions */
#define DP_ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH (10 * 1024) /* AllocatedDeviceStatusDataMaxLength */
#define DP_NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH 256   /* NetworkDeviceDataInterfaceNameMaxLength */
#define DP_NETWORK_DEVICE_DATA_MAX_IPS 16                      /* NetworkDeviceDataMaxIPs */
#define DP_NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH 128 /* NetworkDeviceDataHardwareAddressMaxLength */

/* The implicit extended resource of a DeviceClass (KEP-5004): a container may
 * ask for "deviceclass.resource.kubernetes.io/<class name>". */
#define DP_RESOURCE_DEVICE_CLASS_PREFIX "deviceclass.resource.kubernetes.io/" /* v1.ResourceDeviceClassPrefix */

/* Priorities (scheduling.k8s.io/v1; model/defaults.c). */
#define DP_PRIORITY_HIGHEST_USER_DEFINABLE 1000000000 /* scheduling.HighestUserDefinablePriority */
#define DP_PRIORITY_SYSTEM_CLUSTER_CRITICAL 2000000000 /* system-cluster-critical's value */
#define DP_PRIORITY_SYSTEM_NODE_CRITICAL 2000001000    /* system-node-critical's value */
