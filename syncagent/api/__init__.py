"""Pydantic v2 models of our API: DGD, DCD and the DynamoCheckpoint we read.

Conventions (every model derives from ``KubeModel``):
  * snake_case attributes, camelCase wire keys (``populate_by_name``: both parse);
  * unknown fields are kept in ``model_extra`` and round-trip unchanged;
  * ``model.to_dict()`` = ``model_dump(by_alias=True, exclude_unset=True, exclude_none=True,
    mode="json")``: only fields that were set, never an explicit null (sparse apply intent).
    ``apiVersion``/``kind`` of top-level objects are always emitted.
  * Parsing is lenient about bounds (negative replicas parse); ``validate_graph`` reports them.

Public names:
  DynamoGraphDeployment   api_version, kind, metadata: ObjectMeta, spec: GraphSpec,
                          status: GraphStatus | None; .name, .namespace, .ref ("Kind/ns/name")
  GraphSpec               components: list[Component], env: list[dict] | None (EnvVar dicts),
                          annotations, labels: dict[str, str] | None,
                          backend_framework: "sglang"|"vllm"|"trtllm"|None, restart: Restart|None;
                          .component(name)
  Component               name: str; .lower_name; plus every ComponentFields attribute
  ComponentFields         type: "frontend"|"worker"|"prefill"|"decode"|"planner"|"epp"|None,
                          replicas: int|None, multinode: Multinode|None,
                          pod_template: dict|None (a PodTemplateSpec dict),
                          model_ref: ModelRef|None,
                          global_dynamo_namespace: bool|None, shared_memory_size: int|str|None,
                          min_available: int|None, scaling_adapter: dict|None,
                          experimental: ComponentExperimental|None, epp_config: dict|None;
                          .effective_replicas (unset -> 1), .is_multinode, .node_count,
                          .is_worker_type, .checkpoint -> CheckpointConfig|None, .pod_spec,
                          .pod_metadata, .containers(), .main_container(), .sidecars();
                          extras (frontendSidecar, providerOverride, ...) in .model_extra
  Multinode               node_count: int (default 2)
  node_count_of(c), is_multinode_component(c)  the same two answers for a wire-form component
                          dict (DGD entry or DCD spec): the one rule every module uses
  ModelRef                name: str, revision: str|None
  ComponentExperimental   checkpoint: CheckpointConfig|None
  CheckpointConfig        enabled: bool, checkpoint_ref: str|None,
                          startup_policy: "Immediate"|"WaitForCheckpoint" (default Immediate),
                          job: dict|None
  checkpoint_of(c) -> CheckpointUse|None  a wire-form component's enabled checkpoint (ref,
                          startup_policy; .holds(ready) = waits for one not ready): the one rule
  checkpoint_ready(ck)    a DynamoCheckpoint (model or live dict) is ready: status.phase Ready
  Restart                 id: str, strategy: RestartStrategy|None; .strategy_type
  RestartStrategy         type: "Sequential"|"Parallel" (default Sequential), order: list[str]|None
  GraphStatus             observed_generation, state, conditions: list[Condition]|None,
                          components: dict[str, ComponentReplicaStatus]|None,
                          restart: RestartStatus|None,
                          checkpoints: dict[str, CheckpointStatus]|None,
                          routing: RoutingStatus|None; .condition(type)
  RestartStatus           observed_id (wire "observedID"), phase, in_progress
  CheckpointStatus        checkpoint_name, ready
  RoutingStatus           pathway (a program's; the CRD enum lists the registry's), grove_annotation
  Condition               type, status, reason, message, last_transition_time, observed_generation
  ComponentReplicaStatus  component_kind, component_names, runtime_namespace, replicas,
                          updated_replicas, ready_replicas, available_replicas
  DynamoComponentDeployment  metadata, spec: DynamoComponentDeploymentSpec,
                          status: DynamoComponentDeploymentStatus|None; .component_name,
                          .parent_graph_name
  DynamoComponentDeploymentSpec  ComponentFields + name: str|None, backend_framework
  DynamoComponentDeploymentStatus  observed_generation, conditions, component
  DynamoCheckpoint        metadata, spec: dict|None, status.phase; .ready
  ObjectMeta              name, generate_name, namespace, uid, resource_version, generation,
                          creation_timestamp, deletion_timestamp, labels, annotations,
                          owner_references: list[OwnerReference]|None, finalizers,
                          managed_fields; .being_deleted, .label(k), .annotation(k),
                          .controller_ref(), .owner_of_kind(kind)
  OwnerReference          api_version, kind, name, uid, controller, block_owner_deletion

Validation (``validation.py``): ``validate_graph(dgd, *, namespace=None, dcd_components=None)
-> list[Problem]`` (``dcd_components``: names rendered as DCDs, None = all, i.e. the Component
pathway; V16 applies only to those), ``validate_component_deployment(dcd)``,
``Problem(object_ref, path, rule, message)`` with ``str(p) == "<path>: <message>"`` and
``p.full() == "Kind/ns/name: <path>: <message>"``, ``problems_message(problems)`` ("; "-joined).
Naming used by the rules: ``normalize_name``, ``component_resource_name(dgd, comp)``
(= normalize(f"{dgd}-{comp.lower()}")), ``dynamo_namespace(dgd, ns, *, global_namespace)``.
Loading (``load.py``, pure: the CLI reads the files): ``load_documents(text, *, source)``,
``load_objects(text, *, source)`` (DGDs and DCDs; other kinds skipped),
``load_graphs(text, *, source)``, ``objects_of(docs, *, source)``, ``parse_object(doc)``; all
raise ``LoadError`` (one line). ``schemas.py`` (not re-exported: it reads the vendored schemas)
adds the CRD's structural rules in the API server's words: ``parse_checked``,
``objects_checked``, ``check_schema``, ``unknown_field_warnings``.
Constants: ``API_VERSION``, ``GROUP``, ``VERSION``, ``DGD_KIND``, ``DCD_KIND``,
``MAIN_CONTAINER``, ``MAX_COMPONENTS``.
"""

from syncagent.api.base import KubeModel
from syncagent.api.checkpoint import (
    CHECKPOINT_API_VERSION,
    CHECKPOINT_KIND,
    DynamoCheckpoint,
    DynamoCheckpointStatus,
    checkpoint_ready,
)
from syncagent.api.component import (
    API_VERSION,
    DCD_KIND,
    GROUP,
    MAIN_CONTAINER,
    VERSION,
    WORKER_TYPES,
    BackendFramework,
    CheckpointConfig,
    CheckpointUse,
    ComponentExperimental,
    ComponentFields,
    ComponentType,
    DynamoComponentDeployment,
    DynamoComponentDeploymentSpec,
    DynamoComponentDeploymentStatus,
    ModelRef,
    Multinode,
    checkpoint_of,
    is_multinode_component,
    node_count_of,
)
from syncagent.api.graph import (
    DGD_KIND,
    MAX_COMPONENTS,
    CheckpointStatus,
    Component,
    DynamoGraphDeployment,
    GraphSpec,
    GraphStatus,
    Pathway,
    Restart,
    RestartStatus,
    RestartStrategy,
    RoutingStatus,
)
from syncagent.api.load import (
    LoadError,
    load_documents,
    load_graphs,
    load_objects,
    objects_of,
    parse_object,
)
from syncagent.api.meta import ObjectMeta, OwnerReference
from syncagent.api.status import ComponentReplicaStatus, Condition, find_condition
from syncagent.api.validation import (
    Problem,
    component_resource_name,
    dynamo_namespace,
    normalize_name,
    problems_message,
    validate_component_deployment,
    validate_graph,
)

__all__ = [
    "API_VERSION",
    "CHECKPOINT_API_VERSION",
    "CHECKPOINT_KIND",
    "DCD_KIND",
    "DGD_KIND",
    "GROUP",
    "MAIN_CONTAINER",
    "MAX_COMPONENTS",
    "VERSION",
    "WORKER_TYPES",
    "BackendFramework",
    "CheckpointConfig",
    "CheckpointStatus",
    "CheckpointUse",
    "Component",
    "ComponentExperimental",
    "ComponentFields",
    "ComponentReplicaStatus",
    "ComponentType",
    "Condition",
    "DynamoCheckpoint",
    "DynamoCheckpointStatus",
    "DynamoComponentDeployment",
    "DynamoComponentDeploymentSpec",
    "DynamoComponentDeploymentStatus",
    "DynamoGraphDeployment",
    "GraphSpec",
    "GraphStatus",
    "KubeModel",
    "LoadError",
    "ModelRef",
    "Multinode",
    "ObjectMeta",
    "OwnerReference",
    "Pathway",
    "Problem",
    "Restart",
    "RestartStatus",
    "RestartStrategy",
    "RoutingStatus",
    "checkpoint_of",
    "checkpoint_ready",
    "component_resource_name",
    "dynamo_namespace",
    "find_condition",
    "is_multinode_component",
    "load_documents",
    "load_graphs",
    "load_objects",
    "node_count_of",
    "normalize_name",
    "objects_of",
    "parse_object",
    "problems_message",
    "validate_component_deployment",
    "validate_graph",
]
