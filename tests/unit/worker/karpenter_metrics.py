"""Karpenter v1.14's ``karpenter_*`` metrics: name → (type, label names), written by us from
its metrics reference (website/content/en/v1.14/reference/metrics.md of the AWS provider)
and the definitions it is generated from. The worker is checked against this list, not
against its own code (tests/unit/worker/test_karpenter_parity.py).

Names are as scraped: counters end in ``_total``. Node gauges carry Karpenter's well-known
node labels (the core ones and the AWS provider's, after the "/" and snake-cased) plus
``node_name``, ``phase`` and ``managed``.
"""

from __future__ import annotations

NODE = frozenset(
    {
        *("node_name", "phase", "managed", "nodepool", "zone", "region", "instance_type"),
        *("arch", "os", "capacity_type", "windows_build", "zone_id"),
        *("capacity_reservation_id", "capacity_reservation_type"),
        *("capacity_reservation_interruptible", "instance_hypervisor"),
        *("instance_encryption_in_transit_supported", "instance_category"),
        *("instance_capability_flex", "instance_family", "instance_generation"),
        *("instance_local_nvme", "instance_size", "instance_cpu", "instance_cpu_manufacturer"),
        *("instance_cpu_sustained_clock_speed_mhz", "instance_memory"),
        *("instance_ebs_bandwidth", "instance_network_bandwidth", "instance_gpu_name"),
        *("instance_gpu_manufacturer", "instance_gpu_count", "instance_gpu_memory"),
        *("instance_accelerator_name", "instance_accelerator_manufacturer"),
        *("instance_accelerator_count", "instance_tenancy", "placement_group_id"),
        "placement_group_partition",
    }
)
NODE_RESOURCE = NODE | {"resource_type"}
POD = frozenset(
    {
        *("name", "namespace", "owner", "node", "scheduled", "nodepool", "zone", "arch"),
        *("capacity_type", "instance_type", "phase", "ready", "managed"),
    }
)
NAME_NS = frozenset({"name", "namespace"})
OFFERING = frozenset({"instance_type", "capacity_type", "zone"})


def _l(*names: str) -> frozenset[str]:
    return frozenset(names)


V1_14: dict[str, tuple[str, frozenset[str]]] = {
    "karpenter_build_info": ("gauge", _l("version", "goversion", "goarch", "commit")),
    "karpenter_consolidation_score": ("histogram", _l("decision", "nodepool", "policy")),
    "karpenter_consolidation_moves_total": ("counter", _l("decision", "nodepool", "policy")),
    # NodeClaims
    "karpenter_nodeclaims_unhealthy_disrupted_total": (
        "counter",
        _l("condition", "nodepool", "capacity_type", "image_id"),
    ),
    "karpenter_nodeclaims_termination_duration_seconds": ("histogram", _l("nodepool")),
    "karpenter_nodeclaims_terminated_total": (
        "counter",
        _l("nodepool", "capacity_type", "zone"),
    ),
    "karpenter_nodeclaims_instance_termination_duration_seconds": ("histogram", _l("nodepool")),
    "karpenter_nodeclaims_disrupted_total": ("counter", _l("reason", "nodepool", "capacity_type")),
    "karpenter_nodeclaims_created_total": (
        "counter",
        _l("reason", "nodepool", "min_values_relaxed"),
    ),
    # Nodes
    "karpenter_nodes_total_pod_requests": ("gauge", NODE_RESOURCE),
    "karpenter_nodes_total_pod_limits": ("gauge", NODE_RESOURCE),
    "karpenter_nodes_total_daemon_requests": ("gauge", NODE_RESOURCE),
    "karpenter_nodes_total_daemon_limits": ("gauge", NODE_RESOURCE),
    "karpenter_nodes_termination_duration_seconds": ("summary", _l("nodepool")),
    "karpenter_nodes_terminated_total": ("counter", _l("nodepool", "zone")),
    "karpenter_nodes_system_overhead": ("gauge", NODE_RESOURCE),
    "karpenter_nodes_lifetime_duration_seconds": ("histogram", _l("nodepool")),
    "karpenter_nodes_drained_total": ("counter", _l("nodepool")),
    "karpenter_nodes_current_lifetime_seconds": ("gauge", NODE),
    "karpenter_nodes_created_total": ("counter", _l("nodepool", "zone")),
    "karpenter_nodes_allocatable": ("gauge", NODE_RESOURCE),
    # Pods
    "karpenter_pods_unstarted_time_seconds": ("gauge", NAME_NS),
    "karpenter_pods_unbound_time_seconds": ("gauge", NAME_NS),
    "karpenter_pods_state": ("gauge", POD),
    "karpenter_pods_startup_duration_seconds": ("summary", _l()),
    "karpenter_pods_scheduling_decision_duration_seconds": ("histogram", _l()),
    "karpenter_pods_provisioning_unstarted_time_seconds": ("gauge", NAME_NS),
    "karpenter_pods_provisioning_unbound_time_seconds": ("gauge", NAME_NS),
    "karpenter_pods_provisioning_startup_duration_seconds": ("histogram", _l()),
    "karpenter_pods_provisioning_scheduling_undecided_time_seconds": ("gauge", NAME_NS),
    "karpenter_pods_provisioning_bound_duration_seconds": ("histogram", _l()),
    "karpenter_pods_eviction_requests_total": ("counter", _l("code")),
    "karpenter_pods_drained_total": ("counter", _l("reason")),
    "karpenter_pods_bound_duration_seconds": ("histogram", _l()),
    # Voluntary disruption
    "karpenter_voluntary_disruption_queue_failures_total": (
        "counter",
        _l("decision", "reason", "consolidation_type"),
    ),
    "karpenter_voluntary_disruption_failed_validations_total": (
        "counter",
        _l("consolidation_type"),
    ),
    "karpenter_voluntary_disruption_eligible_nodes": ("gauge", _l("reason")),
    "karpenter_voluntary_disruption_decisions_total": (
        "counter",
        _l("decision", "reason", "consolidation_type"),
    ),
    "karpenter_voluntary_disruption_decisions_by_nodepool_total": (
        "counter",
        _l("nodepool", "decision", "reason", "consolidation_type"),
    ),
    "karpenter_voluntary_disruption_decision_evaluation_duration_seconds": (
        "histogram",
        _l("reason", "consolidation_type"),
    ),
    "karpenter_voluntary_disruption_consolidation_timeouts_total": (
        "counter",
        _l("consolidation_type"),
    ),
    # Scheduler
    "karpenter_scheduler_unschedulable_pods_count": ("gauge", _l("controller")),
    "karpenter_scheduler_unfinished_work_seconds": ("gauge", _l("controller", "scheduling_id")),
    "karpenter_scheduler_scheduling_duration_seconds": ("histogram", _l("controller")),
    "karpenter_scheduler_queue_depth": ("gauge", _l("controller", "scheduling_id")),
    "karpenter_scheduler_pending_pods_by_effective_zone_count": (
        "gauge",
        _l("controller", "zone"),
    ),
    "karpenter_scheduler_ignored_pods_count": ("gauge", _l()),
    # NodePools
    "karpenter_nodepools_usage": ("gauge", _l("nodepool", "resource_type")),
    "karpenter_nodepools_nodes_consuming_budgets": ("gauge", _l("nodepool", "reason")),
    "karpenter_nodepools_limit": ("gauge", _l("nodepool", "resource_type")),
    "karpenter_nodepools_cost_tracker_errors_total": ("counter", _l("nodepool")),
    "karpenter_nodepools_cost_total": ("gauge", _l("nodepool")),
    "karpenter_nodepools_allowed_disruptions": ("gauge", _l("nodepool", "reason")),
    # Interruption
    "karpenter_interruption_received_messages_total": ("counter", _l("message_type")),
    "karpenter_interruption_message_queue_duration_seconds": ("histogram", _l()),
    "karpenter_interruption_instance_status_unhealthy_total": ("counter", _l("category")),
    "karpenter_interruption_deleted_messages_total": ("counter", _l()),
    # Cluster and cluster state
    "karpenter_cluster_utilization_percent": ("gauge", _l("resource_type")),
    "karpenter_cluster_state_unsynced_time_seconds": ("gauge", _l()),
    "karpenter_cluster_state_synced": ("gauge", _l()),
    "karpenter_cluster_state_node_count": ("gauge", _l()),
    # Cloud provider
    "karpenter_cloudprovider_instance_type_offering_price_estimate": ("gauge", OFFERING),
    "karpenter_cloudprovider_instance_type_offering_available": ("gauge", OFFERING),
    "karpenter_cloudprovider_instance_type_memory_bytes": ("gauge", _l("instance_type")),
    "karpenter_cloudprovider_instance_type_cpu_cores": ("gauge", _l("instance_type")),
    "karpenter_cloudprovider_instance_termination_failures_total": (
        "counter",
        _l("zone", "zone_id"),
    ),
    "karpenter_cloudprovider_instance_launch_failures_total": (
        "counter",
        _l("zone", "zone_id", "capacity_type", "reason"),
    ),
    "karpenter_cloudprovider_errors_total": (
        "counter",
        _l("controller", "method", "provider", "error"),
    ),
    "karpenter_cloudprovider_duration_seconds": (
        "histogram",
        _l("controller", "method", "provider"),
    ),
    "karpenter_cloudprovider_batcher_batch_time_seconds": ("histogram", _l("batcher")),
    "karpenter_cloudprovider_batcher_batch_size": ("histogram", _l("batcher")),
}

# Not exported, each with the reason: its meaning does not hold in Joinery.
NOT_EXPORTED: dict[str, str] = {
    "karpenter_consolidation_score": (
        "scores moves of Karpenter's Balanced consolidation policy (alpha), which Joinery does "
        "not have: its consolidation is the WhenEmptyOrUnderutilized search only"
    ),
    "karpenter_consolidation_moves_total": "counts Balanced consolidation moves (as above)",
}

# Names Karpenter used before v1 that Joinery exported and renamed: none may come back.
RENAMED: dict[str, str] = {
    "karpenter_nodeclaims_launched_total": "operator_nodeclaim_status_condition_transitions_total",
    "karpenter_nodeclaims_registered_total": (
        "operator_nodeclaim_status_condition_transitions_total"
    ),
    "karpenter_nodeclaims_initialized_total": (
        "operator_nodeclaim_status_condition_transitions_total"
    ),
    "karpenter_nodes_eviction_requests_total": "karpenter_pods_eviction_requests_total",
}
