from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

CAPABILITY_PLATFORM: Capability
CAPABILITY_TOOLSET: Capability
CAPABILITY_UNSPECIFIED: Capability
DESCRIPTOR: _descriptor.FileDescriptor
OUTCOME_CANCELLED: Outcome
OUTCOME_FAILURE: Outcome
OUTCOME_REJECTED: Outcome
OUTCOME_SUCCESS: Outcome
OUTCOME_UNSPECIFIED: Outcome
SEND_KIND_ARTIFACT: SendKind
SEND_KIND_AUTH_REQUIRED: SendKind
SEND_KIND_DIRECT_REPLY: SendKind
SEND_KIND_FINAL: SendKind
SEND_KIND_INPUT_REQUIRED: SendKind
SEND_KIND_PROGRESS: SendKind
SEND_KIND_UNSPECIFIED: SendKind
TRUST_TIER_LOCAL: TrustTier
TRUST_TIER_PUBLIC: TrustTier
TRUST_TIER_TRUSTED: TrustTier
TRUST_TIER_UNSPECIFIED: TrustTier

class AgentSkill(_message.Message):
    __slots__ = ["description", "examples", "id", "name", "tags"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    EXAMPLES_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    description: str
    examples: _containers.RepeatedScalarFieldContainer[str]
    id: str
    name: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., examples: _Optional[_Iterable[str]] = ...) -> None: ...

class Artifact(_message.Message):
    __slots__ = ["append", "artifact_id", "description", "last_chunk", "metadata", "name", "parts"]
    APPEND_FIELD_NUMBER: _ClassVar[int]
    ARTIFACT_ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    LAST_CHUNK_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    append: bool
    artifact_id: str
    description: str
    last_chunk: bool
    metadata: _struct_pb2.Struct
    name: str
    parts: _containers.RepeatedCompositeFieldContainer[Part]
    def __init__(self, artifact_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[Part, _Mapping]]] = ..., append: bool = ..., last_chunk: bool = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class CallError(_message.Message):
    __slots__ = ["code", "message"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class CallToolRequest(_message.Message):
    __slots__ = ["agent_id", "arguments_json", "call_id", "chat_id", "name", "platform", "trace"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    TRACE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    arguments_json: str
    call_id: str
    chat_id: str
    name: str
    platform: str
    trace: TraceContext
    def __init__(self, name: _Optional[str] = ..., arguments_json: _Optional[str] = ..., call_id: _Optional[str] = ..., platform: _Optional[str] = ..., chat_id: _Optional[str] = ..., trace: _Optional[_Union[TraceContext, _Mapping]] = ..., agent_id: _Optional[str] = ...) -> None: ...

class CallToolResponse(_message.Message):
    __slots__ = ["progress", "result"]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    progress: ToolProgress
    result: ToolResult
    def __init__(self, progress: _Optional[_Union[ToolProgress, _Mapping]] = ..., result: _Optional[_Union[ToolResult, _Mapping]] = ...) -> None: ...

class CancelTurnRequest(_message.Message):
    __slots__ = ["agent_id", "chat_id", "platform", "reason", "task_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    chat_id: str
    platform: str
    reason: str
    task_id: str
    def __init__(self, platform: _Optional[str] = ..., chat_id: _Optional[str] = ..., task_id: _Optional[str] = ..., reason: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class CancelTurnResponse(_message.Message):
    __slots__ = ["cancelled"]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    cancelled: bool
    def __init__(self, cancelled: bool = ...) -> None: ...

class CompleteRequest(_message.Message):
    __slots__ = ["max_tokens", "prompt", "system"]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_FIELD_NUMBER: _ClassVar[int]
    max_tokens: int
    prompt: str
    system: str
    def __init__(self, system: _Optional[str] = ..., prompt: _Optional[str] = ..., max_tokens: _Optional[int] = ...) -> None: ...

class CompleteResponse(_message.Message):
    __slots__ = ["text"]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class ConfigureRequest(_message.Message):
    __slots__ = ["config_json", "data_dir", "host", "host_broker_id", "log_level"]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    DATA_DIR_FIELD_NUMBER: _ClassVar[int]
    HOST_BROKER_ID_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    LOG_LEVEL_FIELD_NUMBER: _ClassVar[int]
    config_json: bytes
    data_dir: str
    host: HostInfo
    host_broker_id: int
    log_level: str
    def __init__(self, config_json: _Optional[bytes] = ..., data_dir: _Optional[str] = ..., host_broker_id: _Optional[int] = ..., log_level: _Optional[str] = ..., host: _Optional[_Union[HostInfo, _Mapping]] = ...) -> None: ...

class ConfigureResponse(_message.Message):
    __slots__ = ["warnings"]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class ConnectRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ["endpoints"]
    ENDPOINTS_FIELD_NUMBER: _ClassVar[int]
    endpoints: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, endpoints: _Optional[_Iterable[str]] = ...) -> None: ...

class DescribeRequest(_message.Message):
    __slots__ = ["host_protocol_minor"]
    HOST_PROTOCOL_MINOR_FIELD_NUMBER: _ClassVar[int]
    host_protocol_minor: int
    def __init__(self, host_protocol_minor: _Optional[int] = ...) -> None: ...

class DescribeResponse(_message.Message):
    __slots__ = ["capabilities", "description", "env_prefixes", "name", "protocol_minor", "version"]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ENV_PREFIXES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_MINOR_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    capabilities: _containers.RepeatedScalarFieldContainer[Capability]
    description: str
    env_prefixes: _containers.RepeatedScalarFieldContainer[str]
    name: str
    protocol_minor: int
    version: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., protocol_minor: _Optional[int] = ..., capabilities: _Optional[_Iterable[_Union[Capability, str]]] = ..., description: _Optional[str] = ..., env_prefixes: _Optional[_Iterable[str]] = ...) -> None: ...

class DisconnectRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class DisconnectResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class DrainRequest(_message.Message):
    __slots__ = ["timeout_ms"]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    timeout_ms: int
    def __init__(self, timeout_ms: _Optional[int] = ...) -> None: ...

class DrainResponse(_message.Message):
    __slots__ = ["abandoned"]
    ABANDONED_FIELD_NUMBER: _ClassVar[int]
    abandoned: int
    def __init__(self, abandoned: _Optional[int] = ...) -> None: ...

class HandleMessageRequest(_message.Message):
    __slots__ = ["agent_id", "chat_id", "continuation", "message_id", "metadata", "parts", "platform", "reference_task_ids", "sender", "task_id", "text", "trace", "trust_tier", "unattended"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTINUATION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    SENDER_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TRACE_FIELD_NUMBER: _ClassVar[int]
    TRUST_TIER_FIELD_NUMBER: _ClassVar[int]
    UNATTENDED_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    chat_id: str
    continuation: bool
    message_id: str
    metadata: _struct_pb2.Struct
    parts: _containers.RepeatedCompositeFieldContainer[Part]
    platform: str
    reference_task_ids: _containers.RepeatedScalarFieldContainer[str]
    sender: Sender
    task_id: str
    text: str
    trace: TraceContext
    trust_tier: TrustTier
    unattended: bool
    def __init__(self, platform: _Optional[str] = ..., chat_id: _Optional[str] = ..., sender: _Optional[_Union[Sender, _Mapping]] = ..., trust_tier: _Optional[_Union[TrustTier, str]] = ..., task_id: _Optional[str] = ..., text: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[Part, _Mapping]]] = ..., message_id: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., unattended: bool = ..., trace: _Optional[_Union[TraceContext, _Mapping]] = ..., reference_task_ids: _Optional[_Iterable[str]] = ..., continuation: bool = ..., agent_id: _Optional[str] = ...) -> None: ...

class HandleMessageResponse(_message.Message):
    __slots__ = ["turn_id"]
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    turn_id: str
    def __init__(self, turn_id: _Optional[str] = ...) -> None: ...

class HandleMessagesRequest(_message.Message):
    __slots__ = ["call_id", "cancel", "request", "timeout_ms"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    cancel: bool
    request: HandleMessageRequest
    timeout_ms: int
    def __init__(self, call_id: _Optional[int] = ..., request: _Optional[_Union[HandleMessageRequest, _Mapping]] = ..., timeout_ms: _Optional[int] = ..., cancel: bool = ...) -> None: ...

class HandleMessagesResponse(_message.Message):
    __slots__ = ["call_id", "error", "response"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    error: CallError
    response: HandleMessageResponse
    def __init__(self, call_id: _Optional[int] = ..., response: _Optional[_Union[HandleMessageResponse, _Mapping]] = ..., error: _Optional[_Union[CallError, _Mapping]] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ["unix_ms"]
    UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    unix_ms: int
    def __init__(self, unix_ms: _Optional[int] = ...) -> None: ...

class HostAgent(_message.Message):
    __slots__ = ["description", "id", "name", "skills"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    description: str
    id: str
    name: str
    skills: _containers.RepeatedCompositeFieldContainer[AgentSkill]
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., skills: _Optional[_Iterable[_Union[AgentSkill, _Mapping]]] = ...) -> None: ...

class HostInfo(_message.Message):
    __slots__ = ["agents", "cancel_turn_unsupported", "name", "optional_rpcs", "protocol_minor", "version"]
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    CANCEL_TURN_UNSUPPORTED_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OPTIONAL_RPCS_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_MINOR_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[HostAgent]
    cancel_turn_unsupported: bool
    name: str
    optional_rpcs: _containers.RepeatedScalarFieldContainer[str]
    protocol_minor: int
    version: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., protocol_minor: _Optional[int] = ..., optional_rpcs: _Optional[_Iterable[str]] = ..., cancel_turn_unsupported: bool = ..., agents: _Optional[_Iterable[_Union[HostAgent, _Mapping]]] = ...) -> None: ...

class HostServiceListToolsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class HostServiceListToolsResponse(_message.Message):
    __slots__ = ["tools"]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedCompositeFieldContainer[ToolDefinition]
    def __init__(self, tools: _Optional[_Iterable[_Union[ToolDefinition, _Mapping]]] = ...) -> None: ...

class ListToolsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListToolsResponse(_message.Message):
    __slots__ = ["tools"]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedCompositeFieldContainer[ToolDefinition]
    def __init__(self, tools: _Optional[_Iterable[_Union[ToolDefinition, _Mapping]]] = ...) -> None: ...

class Part(_message.Message):
    __slots__ = ["data", "filename", "media_type", "metadata", "raw", "text", "url"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    data: _struct_pb2.Value
    filename: str
    media_type: str
    metadata: _struct_pb2.Struct
    raw: bytes
    text: str
    url: str
    def __init__(self, text: _Optional[str] = ..., raw: _Optional[bytes] = ..., url: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., media_type: _Optional[str] = ..., filename: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ProcessingCompleteRequest(_message.Message):
    __slots__ = ["agent_id", "chat_id", "error", "outcome", "platform", "task_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    chat_id: str
    error: str
    outcome: Outcome
    platform: str
    task_id: str
    def __init__(self, platform: _Optional[str] = ..., chat_id: _Optional[str] = ..., task_id: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., error: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class ProcessingCompleteResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class RecordDelegationRequest(_message.Message):
    __slots__ = ["chain_id", "chat_id", "peer", "platform", "remote_context_id", "remote_task_id", "request_summary", "result_summary", "state"]
    CHAIN_ID_FIELD_NUMBER: _ClassVar[int]
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    PEER_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    REMOTE_CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    REMOTE_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RESULT_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    chain_id: str
    chat_id: str
    peer: str
    platform: str
    remote_context_id: str
    remote_task_id: str
    request_summary: str
    result_summary: str
    state: str
    def __init__(self, platform: _Optional[str] = ..., chat_id: _Optional[str] = ..., peer: _Optional[str] = ..., remote_task_id: _Optional[str] = ..., remote_context_id: _Optional[str] = ..., chain_id: _Optional[str] = ..., request_summary: _Optional[str] = ..., result_summary: _Optional[str] = ..., state: _Optional[str] = ...) -> None: ...

class RecordDelegationResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class SendRequest(_message.Message):
    __slots__ = ["agent_id", "artifact", "chat_id", "ends_turn", "kind", "metadata", "parts", "platform", "task_id", "text"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ARTIFACT_FIELD_NUMBER: _ClassVar[int]
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    ENDS_TURN_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    artifact: Artifact
    chat_id: str
    ends_turn: bool
    kind: SendKind
    metadata: _struct_pb2.Struct
    parts: _containers.RepeatedCompositeFieldContainer[Part]
    platform: str
    task_id: str
    text: str
    def __init__(self, platform: _Optional[str] = ..., chat_id: _Optional[str] = ..., task_id: _Optional[str] = ..., kind: _Optional[_Union[SendKind, str]] = ..., text: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[Part, _Mapping]]] = ..., artifact: _Optional[_Union[Artifact, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., ends_turn: bool = ..., agent_id: _Optional[str] = ...) -> None: ...

class SendResponse(_message.Message):
    __slots__ = ["message_id"]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    def __init__(self, message_id: _Optional[str] = ...) -> None: ...

class SendStreamRequest(_message.Message):
    __slots__ = ["call_id", "cancel", "request", "timeout_ms"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    cancel: bool
    request: SendRequest
    timeout_ms: int
    def __init__(self, call_id: _Optional[int] = ..., request: _Optional[_Union[SendRequest, _Mapping]] = ..., timeout_ms: _Optional[int] = ..., cancel: bool = ...) -> None: ...

class SendStreamResponse(_message.Message):
    __slots__ = ["call_id", "error", "response"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    error: CallError
    response: SendResponse
    def __init__(self, call_id: _Optional[int] = ..., response: _Optional[_Union[SendResponse, _Mapping]] = ..., error: _Optional[_Union[CallError, _Mapping]] = ...) -> None: ...

class Sender(_message.Message):
    __slots__ = ["display_name", "id"]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    display_name: str
    id: str
    def __init__(self, id: _Optional[str] = ..., display_name: _Optional[str] = ...) -> None: ...

class ShutdownNotice(_message.Message):
    __slots__ = ["reason"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class ToolDefinition(_message.Message):
    __slots__ = ["description", "name", "parameters_json_schema", "tags", "toolset"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TOOLSET_FIELD_NUMBER: _ClassVar[int]
    description: str
    name: str
    parameters_json_schema: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    toolset: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters_json_schema: _Optional[str] = ..., toolset: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ...) -> None: ...

class ToolProgress(_message.Message):
    __slots__ = ["fraction", "message"]
    FRACTION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    fraction: float
    message: str
    def __init__(self, message: _Optional[str] = ..., fraction: _Optional[float] = ...) -> None: ...

class ToolResult(_message.Message):
    __slots__ = ["content", "is_error"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    content: str
    is_error: bool
    def __init__(self, content: _Optional[str] = ..., is_error: bool = ...) -> None: ...

class TraceContext(_message.Message):
    __slots__ = ["traceparent", "tracestate"]
    TRACEPARENT_FIELD_NUMBER: _ClassVar[int]
    TRACESTATE_FIELD_NUMBER: _ClassVar[int]
    traceparent: str
    tracestate: str
    def __init__(self, traceparent: _Optional[str] = ..., tracestate: _Optional[str] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ["heartbeat", "shutdown"]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    SHUTDOWN_FIELD_NUMBER: _ClassVar[int]
    heartbeat: Heartbeat
    shutdown: ShutdownNotice
    def __init__(self, heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., shutdown: _Optional[_Union[ShutdownNotice, _Mapping]] = ...) -> None: ...

class TrustTier(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Capability(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class SendKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
